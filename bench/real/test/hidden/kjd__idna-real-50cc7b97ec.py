"""Hidden check: bad bytes given to label helpers raise IDNAError"""

import pytest

import idna


def test_check_label_invalid_utf8():
    with pytest.raises(idna.IDNAError):
        idna.check_label(b"\xfe\xff")


def test_ulabel_non_ascii_bytes():
    with pytest.raises(idna.IDNAError):
        idna.ulabel(b"caf\xc3\xa9")
    with pytest.raises(idna.IDNAError):
        idna.ulabel(bytearray(b"\x80abc"))


def test_ascii_bytes_unchanged():
    assert idna.ulabel(b"example") == "example"
    idna.check_label(b"ok")
