"""Hidden check: A-labels that are not canonical Punycode are rejected"""

import pytest

import idna


def test_ulabel_rejects_non_canonical():
    with pytest.raises(idna.IDNAError):
        idna.ulabel("xn---80ak6aa92e")
    with pytest.raises(idna.IDNAError):
        idna.ulabel(bytearray(b"XN---80AK6AA92E"))


def test_decode_rejects_non_canonical_label():
    with pytest.raises(idna.IDNAError):
        idna.decode("xn---80ak6aa92e.com")


def test_canonical_labels_still_decode():
    assert idna.ulabel("xn--bbk") == "\u307e"
    assert idna.decode("xn--80ak6aa92e.com") == "\u0430\u0440\u0440\u04cf\u0435.com"
    assert idna.ulabel("xn--Bcher-kva") == "b\u00fccher"
