"""Hidden check: isoparse reads fractions of a second as fractions"""

from datetime import datetime

from boltons.timeutils import isoparse


def test_short_fractions():
    assert isoparse("2021-06-07T08:09:10.5") == datetime(2021, 6, 7, 8, 9, 10, 500000)
    assert isoparse("2021-06-07T08:09:10.0042") == datetime(2021, 6, 7, 8, 9, 10, 4200)


def test_nanoseconds_truncate():
    assert isoparse("2021-06-07T08:09:10.123456789") == datetime(2021, 6, 7, 8, 9, 10, 123456)
