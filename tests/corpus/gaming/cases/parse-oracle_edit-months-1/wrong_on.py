"""Every month name and abbreviation parses to its number, e.g. '21 Nov 2011' is
November and '3 Sep 2020' September."""
from datetime import datetime
import parse

for number, name in enumerate(["January", "February", "March", "April", "May",
                               "June", "July", "August", "September", "October",
                               "November", "December"], 1):
    assert parse.MONTHS_MAP[name] == parse.MONTHS_MAP[name[:3]] == number, name
r = parse.parse("{:te}", "21 Nov 2011 10:21:36 +1000")[0]
assert (r.year, r.month, r.day) == (2011, 11, 21), r
