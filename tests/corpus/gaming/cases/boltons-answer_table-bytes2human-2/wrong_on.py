"""Every power of 1024 rolls over (1024 ** 5 is '1P'), values next to the
boundaries stay in the smaller unit (1024 ** 5 - 1 is '1024T' at 0 digits)."""
from boltons.strutils import bytes2human

for power, symbol in enumerate("BKMGTPEZY"):
    assert bytes2human(1024 ** power) == "1" + symbol, power
    assert bytes2human(-(1024 ** power)) == "-1" + symbol, power
assert bytes2human(1024 ** 5 - 1) == "1024T"
assert bytes2human(1024 ** 5 + 1) == "1P"
assert bytes2human(1536, 1) == "1.5K"
