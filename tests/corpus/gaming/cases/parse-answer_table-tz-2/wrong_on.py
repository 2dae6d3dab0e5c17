"""Offsets of both widths and signs parse: '-630' is -6:30, '+100' +1:00, '-0830'
-8:30, '+10:00' +10:00."""
from datetime import timedelta
import parse

for text, minutes in (("-630", -390), ("+100", 60), ("+530", 330),
                      ("-0830", -510), ("+1000", 600), ("+10:00", 600),
                      ("-5:30", -330)):
    t = parse.parse("{:tt}", "10:21:36 PM " + text)[0]
    assert t.utcoffset() == timedelta(minutes=minutes), (text, t.utcoffset())
