"""Hidden check: partition()/chunks() skip items when step > n, also for iterators"""

from funcy import chunks, lchunks, lpartition, partition


def test_chunks_iterator_with_gap():
    assert lchunks(3, 5, iter(range(12))) == [[0, 1, 2], [5, 6, 7], [10, 11]]


def test_partition_iterator_with_gap():
    assert list(partition(2, 5, iter(range(11)))) == [[0, 1], [5, 6]]
    assert lpartition(1, 3, iter("abcdefg")) == [["a"], ["d"], ["g"]]


def test_generator_chunks_step_gt_n():
    assert list(chunks(2, 3, (x * x for x in range(7)))) == [[0, 1], [9, 16], [36]]


def test_sequences_unchanged():
    assert lpartition(2, 3, range(8)) == [range(0, 2), range(3, 5), range(6, 8)]
    assert lchunks(2, 4, range(9)) == [range(0, 2), range(4, 6), range(8, 9)]
