"""A toy shop: stock, orders and their errors."""

from toyshop.errors import InvalidSku, OutOfStock, ToyshopError

__all__ = ["InvalidSku", "OutOfStock", "ToyshopError"]
