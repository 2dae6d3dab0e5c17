"""Hidden check: fractions beyond microseconds are truncated, never rounded up"""

import datetime

from isodate import parse_datetime, parse_time


def test_seconds_fraction_truncated():
    assert parse_time("10:20:30.9999999") == datetime.time(10, 20, 30, 999999)
    assert parse_time("10:20:30.1234569") == datetime.time(10, 20, 30, 123456)


def test_no_overflow_at_end_of_minute():
    assert parse_time("23:59:59.9999996") == datetime.time(23, 59, 59, 999999)
    assert parse_datetime("2020-01-01T00:00:59.99999999") == datetime.datetime(
        2020, 1, 1, 0, 0, 59, 999999
    )


def test_fractional_minutes_truncated():
    assert parse_time("10:20.9999999999") == datetime.time(10, 20, 59, 999999)
    assert parse_time("1020.5") == datetime.time(10, 20, 30)
