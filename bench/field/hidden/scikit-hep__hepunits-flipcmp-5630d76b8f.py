"""Hidden check: to_clhep converts quantities whose dimensions CLHEP supports (energy, a
frequency, an area) and rejects one it does not (luminous intensity)"""

import pint
import pytest
from pytest import approx

import hepunits
from hepunits.pint import from_clhep, to_clhep


def test_supported_dimensions_convert():
    ureg = pint.UnitRegistry()
    assert to_clhep(5 * ureg.GeV) == approx(5 * hepunits.GeV)
    assert to_clhep(2 * ureg.megahertz) == approx(2 * hepunits.megahertz)
    assert to_clhep(4 * ureg.meter**2) == approx(4 * hepunits.meter**2)
    assert from_clhep(7 * hepunits.ns, ureg.microsecond).m == approx(0.007)


def test_unsupported_dimension_is_rejected():
    ureg = pint.UnitRegistry()
    with pytest.raises(ValueError, match="Unsupported dimension"):
        to_clhep(2 * ureg.candela)
