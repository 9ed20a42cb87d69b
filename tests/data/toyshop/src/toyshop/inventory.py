"""Shelves and what is on them."""

import re

from .errors import InvalidSku, OutOfStock

_SKU = re.compile(r"[A-Z]{2}-[0-9]+\Z")


class Shelf:
    def __init__(self):
        self._counts = {}

    def add(self, sku, quantity):
        check_sku(sku)
        if quantity <= 0:
            raise ValueError(f"quantity must be positive, got {quantity}")
        self._counts[sku] = self._counts.get(sku, 0) + quantity

    def take(self, sku, quantity):
        have = self._counts.get(sku)
        if have is None:
            raise KeyError(f"unknown {sku=}")
        if have < quantity:
            raise OutOfStock(f"only {have} of {sku} left, {quantity} wanted", sku=sku)
        self._counts[sku] = have - quantity


def check_sku(sku):
    if not isinstance(sku, str):
        raise TypeError("a SKU is a str, got " + type(sku).__name__)
    if not _SKU.match(sku):
        raise InvalidSku(sku)


class Supplier:
    def deliver(self, shelf):
        raise NotImplementedError
