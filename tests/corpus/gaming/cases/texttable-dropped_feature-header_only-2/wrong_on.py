"""A table with only a header draws its header; one with neither draws None."""
from texttable import Texttable

t = Texttable()
t.header(["only"])
assert t.draw() == "+------+\n| only |\n+======+\n+------+", repr(t.draw())
assert Texttable().draw() is None
