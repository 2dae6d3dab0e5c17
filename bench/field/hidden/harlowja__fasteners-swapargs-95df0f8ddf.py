"""Hidden check: write_locked takes the write lock from the instance attribute it names"""

import pytest

import fasteners


class Store(object):
    def __init__(self):
        self.guard = fasteners.ReaderWriterLock()
        self._lock = fasteners.ReaderWriterLock()
        self.items = {}

    @fasteners.write_locked(lock="guard")
    def put(self, key, value=None):
        assert self.guard.is_writer()
        assert self._lock.owner is None
        self.items[key] = value
        return len(self.items)

    @fasteners.write_locked
    def fail(self):
        assert self._lock.owner == fasteners.ReaderWriterLock.WRITER
        raise KeyError("boom")


def test_named_lock_attribute_and_arguments():
    store = Store()
    assert store.put("a", value=1) == 1
    assert store.put("b") == 2
    assert store.items == {"a": 1, "b": None}
    assert store.guard.owner is None
    assert Store.put.__name__ == "put"


def test_default_lock_released_after_exception():
    store = Store()
    with pytest.raises(KeyError):
        store.fail()
    assert store._lock.owner is None
    assert not store._lock.is_writer()
