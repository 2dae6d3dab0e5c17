from shop.rates import INVERSE


def test_inverse():
    assert INVERSE["EUR"] == 1.0
