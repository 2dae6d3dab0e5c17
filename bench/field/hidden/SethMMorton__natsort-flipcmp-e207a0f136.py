"""Hidden check: the pure-Python fast_int converts digit strings (signed too) and natsorted
orders embedded numbers by value"""

from natsort import natsorted, ns
from natsort.compat.fake_fastnumbers import fast_int


def test_fake_fast_int_converts_digit_strings():
    assert fast_int("907") == 907
    assert fast_int("-31") == -31
    assert fast_int("+8") == 8
    assert fast_int("x12") == "x12"


def test_natsorted_orders_numbers_by_value():
    assert natsorted(["v10.txt", "v9.txt", "v100.txt", "v1.txt"]) == [
        "v1.txt", "v9.txt", "v10.txt", "v100.txt"]
    assert natsorted(["b-3", "b-20", "b-1"], alg=ns.SIGNED) == ["b-20", "b-3", "b-1"]
