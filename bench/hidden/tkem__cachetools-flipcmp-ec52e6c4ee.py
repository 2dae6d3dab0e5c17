"""Hidden check: MRUCache evicts the most recently read key"""

import warnings

from cachetools import MRUCache


def make(n):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return MRUCache(n)


def test_read_makes_a_key_most_recent():
    c = make(2)
    c["a"] = 1
    c["b"] = 2
    c["b"]
    c["c"] = 3
    assert sorted(c) == ["a", "c"]


def test_several_reads():
    c = make(3)
    for k in (1, 2, 3):
        c[k] = k
    c[3]
    c[2]
    c[4] = 4
    assert sorted(c) == [1, 3, 4]
