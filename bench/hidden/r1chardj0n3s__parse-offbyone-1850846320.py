"""Hidden check: three-digit timezone offsets"""

from datetime import timedelta

import parse


def test_positive_snnn_offset():
    r = parse.parse("{:tg}", "4/3/2021 10:00 +530")
    assert r[0].utcoffset() == timedelta(hours=5, minutes=30)


def test_negative_snnn_offset():
    r = parse.parse("{:tg}", "4/3/2021 10:00 -945")
    assert r[0].utcoffset() == -timedelta(hours=9, minutes=45)
