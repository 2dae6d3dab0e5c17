"""Hidden check: signed Decimals and special floats"""

from decimal import Decimal
import math

import parse


def test_signed_decimals():
    assert parse.parse("{:F}", "-0.25")[0] == Decimal("-0.25")
    assert parse.parse("{:F}", "+3.5")[0] == Decimal("3.5")


def test_nan_and_inf_floats():
    assert parse.parse("{:f}", "inf")[0] == float("inf")
    assert math.isnan(parse.parse("{:f}", "NaN")[0])
