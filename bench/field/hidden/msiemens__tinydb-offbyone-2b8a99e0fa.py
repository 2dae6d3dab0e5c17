"""Hidden check: a new document ID is one past the largest ID already stored"""

from tinydb import TinyDB
from tinydb.storages import MemoryStorage
from tinydb.table import Document, Table


def test_reopened_json_db_continues_after_max_id(tmp_path):
    path = str(tmp_path / "store.json")
    with TinyDB(path) as db:
        db.insert_multiple([{"n": "a"}, {"n": "b"}, {"n": "c"}])
        db.remove(doc_ids=[2])
    with TinyDB(path) as db:
        assert db.insert({"n": "d"}) == 4
        assert db.insert_multiple([{"n": "e"}, {"n": "f"}]) == [5, 6]
        assert sorted(doc.doc_id for doc in db.all()) == [1, 3, 4, 5, 6]


def test_named_table_reopened_in_same_storage():
    db = TinyDB(storage=MemoryStorage)
    people = db.table("people")
    people.insert_multiple([{"x": i} for i in range(5)])
    again = Table(db.storage, "people")
    assert again.insert({"x": 99}) == 6
    assert again.insert({"x": 100}) == 7


def test_explicit_doc_id_then_auto_ids():
    db = TinyDB(storage=MemoryStorage)
    assert db.insert(Document({"k": 1}, doc_id=3)) == 3
    assert db.insert_multiple([{"k": 2}, {"k": 3}]) == [4, 5]
    assert db.upsert(Document({"k": 4}, doc_id=40)) == [40]
    assert db.insert({"k": 5}) == 41
