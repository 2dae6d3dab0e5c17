"""Hidden check: the float check accepts a value equal to its minimum and rejects only smaller ones"""

import pytest

from configobj import ConfigObj
from configobj.validate import Validator, VdtValueTooSmallError


def test_value_at_the_minimum_is_accepted():
    vtor = Validator()
    assert vtor.check("float(min=2.5)", "2.5") == 2.5
    assert vtor.check("float(-1.25, 4)", -1.25) == -1.25
    assert vtor.check("float(min=0)", 0) == 0.0


def test_value_below_the_minimum_is_rejected():
    vtor = Validator()
    with pytest.raises(VdtValueTooSmallError):
        vtor.check("float(min=2.5)", "2.49")
    assert vtor.check("float(min=2.5, max=2.5)", "2.5") == 2.5


def test_configobj_validates_boundary_floats():
    spec = ["ratio = float(min=0.0, max=1.0)", "[limits]", "low = float(min=-3.5)"]
    cfg = ConfigObj(["ratio = 0.0", "[limits]", "low = -3.5"], configspec=spec)
    assert cfg.validate(Validator()) is True
    assert cfg["ratio"] == 0.0
    assert cfg["limits"]["low"] == -3.5
