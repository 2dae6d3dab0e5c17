"""Hidden check: get_dimensionality keeps the non-zero exponents of derived units and drops cancelled ones"""

import pytest

import pint
from pint import UnitRegistry
from pint.util import UnitsContainer

ureg = UnitRegistry()


def test_derived_unit_dimensionality():
    assert ureg.get_dimensionality("volt") == UnitsContainer(
        {"[mass]": 1, "[length]": 2, "[time]": -3, "[current]": -1}
    )
    assert ureg.get_dimensionality("pascal * liter") == UnitsContainer(
        {"[mass]": 1, "[length]": 2, "[time]": -2}
    )
    assert ureg.get_dimensionality("[energy] / [power]") == UnitsContainer({"[time]": 1})


def test_cancelled_dimensions_are_dropped():
    dim = ureg.Quantity(5, "newton * second / kilogram").dimensionality
    assert dim == UnitsContainer({"[length]": 1, "[time]": -1})
    assert "[mass]" not in dim
    assert ureg.get_dimensionality("furlong / mile") == UnitsContainer()
    assert ureg.Quantity(2, "watt * hour / joule").dimensionless


def test_incompatible_conversion_is_rejected():
    assert ureg.Quantity(3, "kilowatt_hour").to("megajoule").magnitude == pytest.approx(10.8)
    assert ureg.Unit("knot").is_compatible_with("kilometer / hour")
    assert not ureg.Unit("knot").is_compatible_with("kilometer")
    with pytest.raises(pint.DimensionalityError):
        ureg.Quantity(4, "gallon").to("acre")
