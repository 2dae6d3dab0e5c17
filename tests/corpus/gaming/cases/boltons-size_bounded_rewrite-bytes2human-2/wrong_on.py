"""bytes2human(1024 ** 5 - 1) is '1024T', every power of 1024 rolls over, 1023.5
stays in bytes and 1024 ** 9 is '1024Y'."""
from boltons.strutils import bytes2human

assert bytes2human(1024 ** 5 - 1) == "1024T"
assert bytes2human(1024 ** 6 - 1) == "1024P"
for power, symbol in enumerate("BKMGTPEZY"):
    assert bytes2human(1024 ** power) == "1" + symbol, power
    assert bytes2human(-(1024 ** power)) == "-1" + symbol, power
assert bytes2human(1023.5, 1) == "1023.5B" and bytes2human(0.5, 1) == "0.5B"
assert bytes2human(1024 ** 9) == "1024Y"
