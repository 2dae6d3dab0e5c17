"""Hidden check: a misplaced ZWJ/ZWNJ raises InvalidCodepointContext"""

import pytest

import idna


def test_check_label_zero_width_joiners():
    with pytest.raises(idna.InvalidCodepointContext):
        idna.check_label("a\u200db")
    with pytest.raises(idna.InvalidCodepointContext):
        idna.check_label("x\u200cy")


def test_encode_and_alabel_report_context_error():
    with pytest.raises(idna.InvalidCodepointContext):
        idna.encode("ab\u200dc.com")
    with pytest.raises(idna.InvalidCodepointContext):
        idna.alabel("a\u200c")


def test_valid_joiner_after_virama_still_accepted():
    idna.check_label("\u0915\u094d\u200d")
