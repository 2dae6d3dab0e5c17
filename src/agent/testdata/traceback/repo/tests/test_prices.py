import pytest

from shop.prices import Cart, apply_discount, parse_amount, total


def test_parse_amount():
    assert parse_amount("$1.50") == 150


def test_total_two_deep():
    assert total(["$1.00", "oops"]) == 100


def test_discount():
    assert apply_discount(1000, 10) == 900


class TestCart:
    def test_count(self):
        cart = Cart().add("$1").add("$2")
        assert cart.count() == 2


@pytest.mark.parametrize("text,cents", [("$2.05", 205), ("3", 300), ("$0.5", 50)])
def test_parse_param(text, cents):
    assert parse_amount(text) == cents
