"""Hidden check: combination_with_replacement_index() handles None elements"""

from itertools import combinations_with_replacement

import pytest

from more_itertools import combination_with_replacement_index


def expected(element, pool):
    return list(combinations_with_replacement(pool, len(element))).index(tuple(element))


def test_none_in_pool_and_element():
    assert combination_with_replacement_index([0, None, None], [0, None, 5]) == 3
    assert combination_with_replacement_index([1, None], [1, None, 2]) == 1


def test_matches_itertools_with_none():
    pool = ["a", None, "b"]
    for r in (1, 2, 3):
        for comb in combinations_with_replacement(pool, r):
            assert combination_with_replacement_index(comb, pool) == expected(comb, pool)


def test_invalid_element_still_raises():
    with pytest.raises(ValueError):
        combination_with_replacement_index("cb", "abc")
    with pytest.raises(ValueError):
        combination_with_replacement_index([None, 0], [0, None])
