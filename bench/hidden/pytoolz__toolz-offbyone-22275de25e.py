"""Hidden check: partition_all of a lazy sequence keeps every element"""

from toolz import partition_all


def test_partition_all_generators():
    assert list(partition_all(4, (i for i in range(7)))) == [(0, 1, 2, 3), (4, 5, 6)]
    assert list(partition_all(5, iter("abcdefg"))) == [tuple("abcde"), ("f", "g")]
    assert list(partition_all(3, iter([1]))) == [(1,)]
