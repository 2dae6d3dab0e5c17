"""Hidden check: a delta under a second shows milliseconds exactly when the minimum unit asks
for them (milliseconds, or microseconds once there is a whole millisecond); other deltas are
"a moment" or microseconds"""

import datetime as dt

import humanize


def test_milliseconds_when_asked_for():
    d = dt.timedelta(microseconds=2_500)
    assert humanize.naturaldelta(d, minimum_unit="milliseconds") == "2 milliseconds"
    assert humanize.naturaldelta(d, minimum_unit="microseconds") == "2 milliseconds"


def test_no_milliseconds_otherwise():
    assert humanize.naturaldelta(dt.timedelta(microseconds=2_500)) == "a moment"
    assert (
        humanize.naturaldelta(dt.timedelta(microseconds=7), minimum_unit="microseconds")
        == "7 microseconds"
    )
