"""parse('{:tt}', '10:21:36 PM -530') run first in a fresh interpreter has utcoffset
-5:30; so do '-0530' and '-5:30', and '+100' is +1:00."""
from datetime import time, timedelta
import parse

t = parse.parse("{:tt}", "10:21:36 PM -530")[0]
assert t.utcoffset() == -timedelta(hours=5, minutes=30), t.utcoffset()
for text, minutes in (("-0530", -330), ("-5:30", -330), ("+100", 60), ("+1000", 600)):
    t = parse.parse("{:tt}", "10:21:36 PM " + text)[0]
    assert t.utcoffset() == timedelta(minutes=minutes), (text, t.utcoffset())
other = time(22, 21, 36, tzinfo=parse.FixedTzOffset(60, "+01:00"))
assert parse.parse("{:tt}", "10:21:36 PM -530")[0] != other
