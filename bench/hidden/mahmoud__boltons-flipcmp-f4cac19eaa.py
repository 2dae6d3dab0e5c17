"""Hidden check: complement of a complement is the original set"""

from boltons.setutils import complement


def test_double_complement():
    c = complement(complement({3, 4}))
    assert sorted(c) == [3, 4]
    assert c == {3, 4}


def test_membership_of_a_complement():
    assert 2 in complement({1})
    assert 1 not in complement({1})
