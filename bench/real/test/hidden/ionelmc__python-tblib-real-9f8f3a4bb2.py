"""Hidden check: OSError subclasses without errno unpickle exactly as they were"""

import pickle

import tblib.pickling_support


def _roundtrip(exc):
    try:
        raise exc
    except OSError as e:
        caught = e
    tblib.pickling_support.install(caught)
    return caught, pickle.loads(pickle.dumps(caught))


def test_timeout_errors_keep_their_text():
    for exc in (TimeoutError("slow peer"), TimeoutError()):
        orig, got = _roundtrip(exc)
        assert type(got) is TimeoutError
        assert got.args == orig.args
        assert str(got) == str(orig)
        assert got.errno is None and got.strerror is None


def test_connection_errors_keep_their_text():
    for cls in (ConnectionResetError, BrokenPipeError, BlockingIOError):
        orig, got = _roundtrip(cls("gone away"))
        assert type(got) is cls
        assert str(got) == str(orig) == "gone away"
        assert got.errno is None


def test_plain_oserror_beside_one_with_errno():
    orig, got = _roundtrip(FileNotFoundError(2, "No such file", "missing.txt"))
    assert (got.errno, got.strerror, got.filename) == (2, "No such file", "missing.txt")
    assert str(got) == str(orig)
    orig, got = _roundtrip(PermissionError("denied"))
    assert str(got) == "denied"
    assert repr(got) == repr(orig)
