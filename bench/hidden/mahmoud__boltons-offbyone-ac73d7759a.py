"""Hidden check: relative_time picks the right unit"""

from datetime import datetime, timedelta

from boltons.timeutils import decimal_relative_time, relative_time

D = datetime(2020, 1, 1)


def test_units():
    assert relative_time(D, D + timedelta(minutes=5)) == "5 minutes ago"
    assert relative_time(D, D + timedelta(days=3)) == "3 days ago"
    assert relative_time(D, D - timedelta(days=400)) == "1 year from now"


def test_decimal_relative_time():
    assert decimal_relative_time(D, D + timedelta(hours=5)) == (5.0, "hours")
