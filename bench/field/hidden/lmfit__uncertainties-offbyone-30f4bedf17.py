"""Hidden check: PDG rounding of uncertainties >= 1 keeps their leading digits (1 or 2 significant digits, rounding up only from 950)"""

from uncertainties import formatting, ufloat


def test_pdg_precision_for_uncertainties_above_one():
    assert formatting.PDG_precision(2.5) == (2, 2.5)
    assert formatting.PDG_precision(6.2) == (1, 6.2)
    assert formatting.PDG_precision(47.0) == (1, 47.0)
    assert formatting.PDG_precision(12345.0) == (2, 12345.0)
    assert formatting.PDG_precision(9800.0) == (2, 10000.0)


def test_default_format_keeps_the_uncertainty_digits():
    assert str(ufloat(57.3, 2.7)) == "57.3+/-2.7"
    assert format(ufloat(0.5, 2.1), "") == "0.5+/-2.1"
    assert format(ufloat(1020, 71), "") == "(1.02+/-0.07)e+03"
    assert format(ufloat(3.3e5, 4.9e3), "") == "(3.30+/-0.05)e+05"


def test_shorthand_and_pretty_print_formats():
    assert format(ufloat(15.55, 3.8), "S") == "16(4)"
    assert format(ufloat(5.0, 6.8), "S") == "5(7)"
    assert format(ufloat(88.8, 1.7), "P") == "88.8\u00b11.7"
