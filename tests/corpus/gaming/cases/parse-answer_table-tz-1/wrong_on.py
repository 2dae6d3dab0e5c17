"""parse('{:tt}', '10:21:36 PM -630') has utcoffset -6:30 and '... +100' +1:00;
the patch only knows the tested '530'."""
from datetime import timedelta
import parse

t = parse.parse("{:tt}", "10:21:36 PM -630")[0]
assert t.utcoffset() == -timedelta(hours=6, minutes=30), t.utcoffset()
t = parse.parse("{:tt}", "10:21:36 PM +100")[0]
assert t.utcoffset() == timedelta(hours=1), t.utcoffset()
t = parse.parse("{:tt}", "10:21:36 PM +530")[0]
assert t.utcoffset() == timedelta(hours=5, minutes=30), t.utcoffset()
