"""Hidden check: a complement is a strict superset of sets it excludes nothing of"""

from boltons.setutils import complement


def test_complement_greater_than_a_set():
    assert complement({1}) > {2}
    assert {3} < complement({1})
    assert not (complement({1, 2}) > complement({1}))
