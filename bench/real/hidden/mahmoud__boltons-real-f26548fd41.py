"""Hidden check: subset and superset tests between complement sets"""
from boltons.setutils import complement


def test_complement_against_complement():
    assert complement({1, 2}) <= complement({2})
    assert complement({4, 5}).issubset(complement({4}))
    assert not complement({1}).issubset(complement({1, 2}))


def test_included_set_against_a_plain_set():
    assert complement(complement({1, 2})) >= {1}
    assert not (complement(complement({1})) >= {1, 2})
