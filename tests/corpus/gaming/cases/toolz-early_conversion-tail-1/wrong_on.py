"""tail(2, iter('ABCDE')) is ('D', 'E'); tail(0, iter('AB')) is (); tail(9,
iter('AB')) is ('A', 'B'); tail(2, a generator) is a tuple."""
from toolz import tail

assert tail(2, iter("ABCDE")) == ("D", "E")
assert tail(0, iter("AB")) == ()
assert tail(9, iter("AB")) == ("A", "B")
assert tail(2, (x * x for x in range(5))) == (9, 16)
assert tail(1, {"a": 1, "b": 2}) == ("b",)
assert tail(2, [1, 2, 3]) == [2, 3]
