"""Hidden check: Bits negative indices count from the end"""

import pytest

from boltons.mathutils import Bits


def test_negative_indices():
    assert Bits("1001")[-1] is True
    assert Bits("0110")[-4] is False
    assert Bits(5)[-1] is True


def test_out_of_range_negative_index():
    with pytest.raises(IndexError):
        Bits("01")[-3]
