"""Hidden check: ExceptionGroups unpickle with their message and exceptions"""

import pickle

import tblib.pickling_support


def _roundtrip(exc):
    try:
        raise exc
    except BaseException as e:
        caught = e
    tblib.pickling_support.install(caught)
    return pickle.loads(pickle.dumps(caught))


def test_exception_group_message_and_members():
    got = _roundtrip(ExceptionGroup("two problems", [ValueError("v"), KeyError("k")]))
    assert type(got) is ExceptionGroup
    assert got.message == "two problems"
    assert [type(e) for e in got.exceptions] == [ValueError, KeyError]
    assert str(got) == "two problems (2 sub-exceptions)"


def test_nested_groups():
    inner = ExceptionGroup("inner", [TypeError("t")])
    got = _roundtrip(ExceptionGroup("outer", [inner, RuntimeError("r")]))
    assert got.message == "outer"
    assert got.exceptions[0].message == "inner"
    assert str(got.exceptions[0].exceptions[0]) == "t"


class Batch(ExceptionGroup):
    pass


def test_group_subclass_with_note():
    group = Batch("batch", [OSError("io"), ValueError("bad")])
    group.add_note("a note")
    got = _roundtrip(group)
    assert type(got) is Batch
    assert got.message == "batch"
    assert got.__notes__ == ["a note"]
    assert [str(e) for e in got.exceptions] == ["io", "bad"]
