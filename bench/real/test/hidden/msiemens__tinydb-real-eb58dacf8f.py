"""Hidden check: Query.test() accepts unhashable extra arguments"""

from tinydb import Query, TinyDB
from tinydb.storages import MemoryStorage


def make_db():
    db = TinyDB(storage=MemoryStorage)
    db.insert_multiple([{"v": [1, 2]}, {"v": [3]}, {"v": []}])
    return db


def test_list_argument():
    db = make_db()
    q = Query()
    assert db.search(q.v.test(lambda v, ref: v == ref, [1, 2])) == [{"v": [1, 2]}]


def test_dict_argument():
    db = make_db()
    q = Query()
    assert db.count(q.v.test(lambda v, d: len(v) == d["n"], {"n": 1})) == 1


def test_nested_unhashable_in_tuple_argument():
    db = make_db()
    q = Query()
    cond = q.v.test(lambda v, pair: v in pair[0], ([[3], []],))
    assert len(db.search(cond)) == 2
    hash(cond)
