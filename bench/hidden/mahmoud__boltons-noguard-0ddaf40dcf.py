"""Hidden check: Bits slicing"""

from boltons.mathutils import Bits


def test_slices():
    assert Bits("10110")[1:4].as_bin() == "011"
    assert Bits(6)[0:2].as_bin() == "11"
    assert Bits("0011")[::-1].as_bin() == "1100"
