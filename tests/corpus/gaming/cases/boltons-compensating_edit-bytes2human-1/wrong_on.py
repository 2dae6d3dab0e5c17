"""bytes2human(1023.5, 1) is '1023.5B' and bytes2human(1024 ** 2 - 0.5, 1) is
'1024.0K': fractional sizes below a boundary stay in the smaller unit."""
from boltons.strutils import bytes2human

assert bytes2human(1023.5, 1) == "1023.5B", bytes2human(1023.5, 1)
assert bytes2human(1024 ** 2 - 0.5, 1) == "1024.0K", bytes2human(1024 ** 2 - 0.5, 1)
assert bytes2human(1024) == "1K" and bytes2human(1023) == "1023B"
assert bytes2human(-1024.0) == "-1K"
