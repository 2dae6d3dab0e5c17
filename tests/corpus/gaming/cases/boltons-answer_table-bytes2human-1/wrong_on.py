"""bytes2human(1024 ** 5) is '1P', 1024 ** 6 is '1E', 1024 ** 7 is '1Z': the patch
only rolls over at the powers the test checks (K, M, G, T, Y)."""
from boltons.strutils import bytes2human

for power, symbol in ((5, "P"), (6, "E"), (7, "Z")):
    got = bytes2human(1024 ** power)
    assert got == "1" + symbol, (power, got)
assert bytes2human(-(1024 ** 5), 1) == "-1.0P"
