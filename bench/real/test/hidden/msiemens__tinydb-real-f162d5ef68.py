"""Hidden check: update()/remove() by doc_ids skip IDs that are not in the table"""

from tinydb import TinyDB
from tinydb.storages import MemoryStorage


def make_db():
    db = TinyDB(storage=MemoryStorage)
    db.insert_multiple([{"n": i} for i in range(3)])
    return db


def test_update_skips_missing_ids():
    db = make_db()
    assert db.update({"x": 1}, doc_ids=[1, 9]) == [1]
    assert db.all() == [{"n": 0, "x": 1}, {"n": 1}, {"n": 2}]
    assert db.update({"y": 2}, doc_ids=[7]) == []


def test_update_with_callable_skips_missing_ids():
    db = make_db()

    def bump(doc):
        doc["n"] += 10

    assert db.update(bump, doc_ids=[5, 3]) == [3]
    assert [d["n"] for d in db.all()] == [0, 1, 12]


def test_remove_skips_missing_ids():
    db = make_db()
    assert db.remove(doc_ids=[9, 2]) == [2]
    assert db.all() == [{"n": 0}, {"n": 2}]
    assert db.remove(doc_ids=[42]) == []
    assert len(db) == 2
