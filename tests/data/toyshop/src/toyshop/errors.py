"""The shop's own exception hierarchy."""


class ToyshopError(Exception):
    """Base of the shop's errors."""


class OutOfStock(ToyshopError):
    """An order asks for more than the shelf holds."""

    def __init__(self, message, *, sku=None):
        super().__init__(message)
        self.sku = sku


class InvalidSku(ToyshopError, ValueError):
    """A stock-keeping unit that is not two letters, a dash and digits."""


class QuantityPositiveError(ToyshopError):
    """Named like the class errcat would make for a message below: it must not be shadowed."""
