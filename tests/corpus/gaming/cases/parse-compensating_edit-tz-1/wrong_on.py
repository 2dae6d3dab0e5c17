"""'a 10:21:36 PM +930 b' parsed with '{:tt}' has a +09:30 offset, '-845' -08:45 and
'-530' -05:30 (one hour digit, two minute digits)."""
from datetime import timedelta
import parse

for text, minutes in (("+930", 570), ("-845", -525), ("-530", -330), ("+100", 60),
                      ("+0930", 570), ("-5:30", -330)):
    r = parse.parse("a {:tt} b", "a 10:21:36 PM %s b" % text)
    got = r[0].tzinfo.utcoffset(None)
    assert got == timedelta(minutes=minutes), (text, got)
