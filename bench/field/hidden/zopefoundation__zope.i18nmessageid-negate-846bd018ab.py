"""Hidden check: a Message keeps the mapping it is given (or copies its source's) and defaults to None"""

from zope.i18nmessageid.message import pyMessage


def test_explicit_mapping_is_kept():
    msg = pyMessage("hello ${who}", "greetings", mapping={"who": "Ann"})
    assert msg.mapping == {"who": "Ann"}
    assert msg.domain == "greetings"
    assert msg == "hello ${who}"


def test_no_mapping_means_none():
    msg = pyMessage("plain", "dom", "Plain text")
    assert msg.mapping is None
    assert msg.default == "Plain text"


def test_copy_inherits_the_mapping():
    source = pyMessage("${n} items", "shop", mapping={"n": 3})
    assert pyMessage(source).mapping == {"n": 3}
    assert pyMessage(source, default="${n} things").mapping == {"n": 3}
    assert pyMessage(source, mapping={"n": 4}).mapping == {"n": 4}


def test_reduce_round_trip_keeps_mapping():
    msg = pyMessage("bye ${who}", "greetings", mapping={"who": "Bo"}, number=2)
    cls, state = msg.__reduce__()
    assert state == ("bye ${who}", "greetings", None, {"who": "Bo"}, None, None, 2)
    assert cls(*state).mapping == {"who": "Bo"}
