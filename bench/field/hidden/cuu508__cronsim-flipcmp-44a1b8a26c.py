"""Hidden check: explain() parses each cron field and collapses repeated terms into one"""

from datetime import datetime

from cronsim import CronSim
from cronsim.explain import explain


def test_repeated_minute_and_day_values_are_deduplicated():
    assert explain("7,7,7 3 * * *") == "At 03:07 every day"
    assert explain("15 4 1,1,20 * *") == "At 04:15 on the first and the 20th day of month"


def test_overlapping_ranges_and_weekdays():
    assert explain("0 9-10,10 * * *") == "At 09:00 and 10:00 every day"
    assert explain("0 0 * * 1-5,1-5") == "At 00:00 on Monday through Friday"
    assert explain("*/20 * * * MON,MON") == "Every 20th minute of every hour on Monday"


def test_plain_expressions_via_cronsim_object():
    start = datetime(2024, 5, 17, 12, 0)
    assert CronSim("13 8 * 2 *", start).explain() == "At 08:13 every day in February"
    assert CronSim("40 23 * * SAT#2", start).explain() == (
        "At 23:40 on the second Saturday of the month"
    )
