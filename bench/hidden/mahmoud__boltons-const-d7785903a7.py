"""Hidden check: bytes2human rounds to whole units by default"""

from boltons.strutils import bytes2human


def test_default_digits():
    assert bytes2human(3000) == "3K"
    assert bytes2human(5 * 1024 ** 3) == "5G"
    assert bytes2human(999) == "999B"


def test_explicit_digits():
    assert bytes2human(1536, 2) == "1.50K"
