"""Hidden check: fractions of a second are read exactly"""

import parse


def test_iso_microseconds():
    assert parse.parse("{:ti}", "2023-01-02T03:04:05.000249")[0].microsecond == 249


def test_other_formats():
    assert parse.parse("{:tg}", "2/1/2023 03:04:05.000983")[0].microsecond == 983
    assert parse.parse("{:ti}", "2023-01-02T03:04:05.5")[0].microsecond == 500000
