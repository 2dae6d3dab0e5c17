"""Hidden check: running_* functions take maxlen through the index protocol and reject floats"""

import pytest

from more_itertools import running_max, running_mean, running_min, running_statistics


class Two:
    def __index__(self):
        return 2


def test_index_objects_accepted():
    assert list(running_min([3, 1, 2], maxlen=Two())) == [3, 1, 1]
    assert list(running_max([1, 5, 2, 0], maxlen=Two())) == [1, 5, 5, 2]
    assert list(running_mean([2, 4, 6], maxlen=Two())) == [2.0, 3.0, 5.0]


def test_running_statistics_index_object():
    stats = list(running_statistics([1, 2, 4], maxlen=Two()))
    assert len(stats) == 3


def test_float_maxlen_rejected():
    with pytest.raises(TypeError):
        list(running_min([3, 1, 2], maxlen=2.0))
    with pytest.raises(TypeError):
        list(running_max([3, 1], maxlen=2.0))
    with pytest.raises(TypeError):
        list(running_mean([2, 4, 6], maxlen=2.5))
