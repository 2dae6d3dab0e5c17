"""Hidden check: join with left_default is a right outer join"""

from toolz import join


def test_right_join_pairs_unmatched_right_items_with_the_default():
    out = list(join(0, [(1, "one")], 0, [(1, "uno"), (2, "dos")], left_default="?"))
    assert out == [((1, "one"), (1, "uno")), ("?", (2, "dos"))]
