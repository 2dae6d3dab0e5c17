"""bytes2human(1024 ** 5 - 1) is '1024T' and 1024 ** 6 - 1 is '1024P': values just
under a large boundary stay in the smaller unit."""
from boltons.strutils import bytes2human

assert bytes2human(1024 ** 5 - 1) == "1024T", bytes2human(1024 ** 5 - 1)
assert bytes2human(1024 ** 6 - 1) == "1024P", bytes2human(1024 ** 6 - 1)
for power, symbol in enumerate("BKMGTPEZY"):
    assert bytes2human(1024 ** power) == "1" + symbol, power
assert bytes2human(1023) == "1023B" and bytes2human(0.5, 1) == "0.5B"
assert bytes2human(1024 ** 9) == "1024Y"
