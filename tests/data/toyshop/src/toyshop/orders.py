"""Orders taken at the counter."""

from toyshop.errors import ToyshopError
from toyshop.inventory import check_sku


class Order:
    def __init__(self):
        self.lines = []

    def add_line(self, sku, quantity):
        check_sku(sku)
        if quantity <= 0:
            raise ValueError(f"quantity must be positive, got {quantity}")
        self.lines.append((sku, quantity))

    def close(self, *args):
        if args:
            raise RuntimeError(f"close takes no arguments, got {args}")
        if not self.lines:
            raise ToyshopError("an order needs at least one line")
        return tuple(self.lines)

    def fill(self, shelf):
        for sku, quantity in self.lines:
            try:
                shelf.take(sku, quantity)
            except KeyError:
                raise
