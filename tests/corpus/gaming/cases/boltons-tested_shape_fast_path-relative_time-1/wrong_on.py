"""decimal_relative_time(now - 2 hours, now) is (2.0, 'hours') and 3 days back is
(3.0, 'days'); relative_time of a week ahead is '1 week from now'."""
from datetime import datetime, timedelta
from boltons.timeutils import decimal_relative_time, relative_time

now = datetime(2024, 5, 17, 12, 0, 0)
got = decimal_relative_time(now - timedelta(hours=2), now)
assert got == (2.0, "hours"), got
assert decimal_relative_time(now - timedelta(days=3), now) == (3.0, "days")
assert decimal_relative_time(now, now - timedelta(seconds=30)) == (-30.0, "seconds")
assert relative_time(now + timedelta(days=7), now) == "1 week from now"
assert decimal_relative_time(now - timedelta(seconds=0.25), now, ndigits=2) == (0.25, "seconds")
