"""Hidden check: raise_from chains the cause"""

import pytest

import six


def test_cause_is_set():
    with pytest.raises(KeyError) as info:
        six.raise_from(KeyError("k"), ValueError("v"))
    assert isinstance(info.value.__cause__, ValueError)


def test_from_none_suppresses_the_context():
    with pytest.raises(OSError) as info:
        six.raise_from(OSError("o"), None)
    assert info.value.__cause__ is None
    assert info.value.__suppress_context__ is True
