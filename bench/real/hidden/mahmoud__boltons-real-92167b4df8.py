"""Hidden check: empty Bits round-trip"""

from boltons.mathutils import Bits


def test_empty_renderings():
    assert Bits("").as_bin() == ""
    assert Bits("").as_hex() == ""


def test_empty_parsing():
    assert Bits.from_hex("").len == 0
    assert Bits.from_bytes(b"").as_bytes() == b""
    assert Bits.from_hex(Bits("").as_hex()).len == 0
