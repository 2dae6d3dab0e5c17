"""Hidden check: merge_sorted with a key merges every input"""

from toolz import merge_sorted


def test_merge_sorted_with_key_two_inputs():
    assert list(merge_sorted([9, 4], [7, 1], key=lambda x: -x)) == [9, 7, 4, 1]


def test_merge_sorted_with_key_three_inputs():
    out = list(merge_sorted(["bb", "dddd"], ["a", "ccc"], ["eeeee"], key=len))
    assert out == ["a", "bb", "ccc", "dddd", "eeeee"]
