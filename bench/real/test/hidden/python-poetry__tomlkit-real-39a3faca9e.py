"""Hidden check: DateTime.astimezone() without an argument converts to local time"""

import datetime

import tomlkit


def test_aware_datetime_to_local():
    doc = tomlkit.parse('dt = 2020-01-01T12:00:00+02:00\n')
    r = doc['dt'].astimezone()
    plain = datetime.datetime(2020, 1, 1, 12, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))
    assert r == plain
    assert r.utcoffset() == plain.astimezone().utcoffset()


def test_item_datetime_to_local():
    src = datetime.datetime(1999, 12, 31, 23, 59, 30, tzinfo=datetime.timezone.utc)
    r = tomlkit.item(src).astimezone()
    assert r == src
    assert r.replace(tzinfo=None) == src.astimezone().replace(tzinfo=None)


def test_local_datetime_gets_local_offset():
    doc = tomlkit.parse('dt = 2021-06-01T08:30:00\n')
    r = doc['dt'].astimezone()
    plain = datetime.datetime(2021, 6, 1, 8, 30).astimezone()
    assert r == plain
    assert r.tzinfo is not None and r.utcoffset() == plain.utcoffset()
