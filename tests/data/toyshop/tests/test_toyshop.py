"""The shop's own tests: they must pass before and after errcat is adopted."""

import pickle
import unittest

import toyshop
from toyshop.errors import InvalidSku, OutOfStock, ToyshopError
from toyshop.inventory import Shelf, Supplier, check_sku
from toyshop.orders import Order


class ShelfTests(unittest.TestCase):
    def test_non_positive_quantity(self):
        with self.assertRaises(ValueError) as caught:
            Shelf().add("AB-1", 0)
        self.assertEqual(str(caught.exception), "quantity must be positive, got 0")

    def test_unknown_sku_names_itself(self):
        with self.assertRaises(KeyError) as caught:
            Shelf().take("AB-1", 1)
        self.assertEqual(caught.exception.args[0], "unknown sku='AB-1'")

    def test_out_of_stock_keeps_its_fields(self):
        shelf = Shelf()
        shelf.add("AB-1", 2)
        with self.assertRaises(OutOfStock) as caught:
            shelf.take("AB-1", 5)
        self.assertEqual(str(caught.exception), "only 2 of AB-1 left, 5 wanted")
        self.assertEqual(caught.exception.sku, "AB-1")

    def test_sku_must_be_text(self):
        with self.assertRaises(TypeError) as caught:
            check_sku(12)
        self.assertEqual(str(caught.exception), "a SKU is a str, got int")

    def test_malformed_sku(self):
        with self.assertRaises(InvalidSku) as caught:
            check_sku("ab1")
        self.assertIsInstance(caught.exception, ValueError)
        self.assertEqual(str(caught.exception), "ab1")

    def test_supplier_is_abstract(self):
        with self.assertRaises(NotImplementedError):
            Supplier().deliver(Shelf())


class OrderTests(unittest.TestCase):
    def test_non_positive_quantity(self):
        with self.assertRaises(ValueError) as caught:
            Order().add_line("AB-1", -3)
        self.assertEqual(str(caught.exception), "quantity must be positive, got -3")

    def test_close_rejects_arguments(self):
        with self.assertRaises(RuntimeError) as caught:
            Order().close(1, 2)
        self.assertEqual(str(caught.exception), "close takes no arguments, got (1, 2)")

    def test_empty_order(self):
        with self.assertRaises(ToyshopError) as caught:
            Order().close()
        self.assertEqual(str(caught.exception), "an order needs at least one line")

    def test_errors_pickle(self):
        try:
            Order().add_line("AB-1", 0)
        except ValueError as error:
            copy = pickle.loads(pickle.dumps(error))
            self.assertEqual(str(copy), str(error))
            self.assertIs(type(copy), type(error))

    def test_fill_reraises(self):
        order = Order()
        order.add_line("AB-1", 1)
        with self.assertRaises(KeyError):
            order.fill(Shelf())

    def test_package_exports(self):
        self.assertIs(toyshop.OutOfStock, OutOfStock)


if __name__ == "__main__":
    unittest.main()
