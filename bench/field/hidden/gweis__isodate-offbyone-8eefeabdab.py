"""Hidden check: the %j (day of year) directive counts 1 January as day 001"""

from datetime import date, datetime

import isodate


def test_first_and_last_day_of_leap_year():
    assert isodate.strftime(date(2024, 1, 1), "%Y-%j") == "2024-001"
    assert isodate.strftime(date(2024, 12, 31), "%Y-%j") == "2024-366"
    assert isodate.strftime(date(2023, 12, 31), "%Y%j") == "2023365"


def test_date_isoformat_ordinal():
    assert isodate.date_isoformat(date(2000, 3, 1), isodate.DATE_EXT_ORD_COMPLETE) == "2000-061"
    assert isodate.date_isoformat(date(1999, 3, 1), isodate.DATE_BAS_ORD_COMPLETE) == "1999060"


def test_datetime_isoformat_ordinal_round_trips():
    dt = datetime(2021, 2, 1, 8, 30, 5, tzinfo=isodate.UTC)
    text = isodate.datetime_isoformat(dt, isodate.DT_EXT_ORD_COMPLETE)
    assert text == "2021-032T08:30:05Z"
    assert isodate.parse_datetime(text) == dt
