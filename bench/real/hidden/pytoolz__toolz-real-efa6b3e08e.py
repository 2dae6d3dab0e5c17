"""Hidden check: partition_all refuses a sequence whose __len__ lies"""

import pytest

from toolz import partition_all


class Lying(list):
    def __init__(self, items, off):
        self.off = off
        super().__init__(items)

    def __len__(self):
        return super().__len__() + self.off


def test_len_too_long():
    with pytest.raises(LookupError):
        list(partition_all(3, Lying([1, 2, 3, 4], 1)))


def test_len_too_short():
    with pytest.raises(LookupError):
        list(partition_all(4, Lying([1, 2, 3, 4, 5, 6], -2)))


def test_honest_sequences():
    assert list(partition_all(3, [1, 2, 3, 4])) == [(1, 2, 3), (4,)]
    assert list(partition_all(2, range(5))) == [(0, 1), (2, 3), (4,)]
