"""OMD.copy() is a new OrderedMultiDict with every value: changes to the copy do
not reach the original."""
from boltons.dictutils import OMD

o = OMD([("a", 1), ("b", 2), ("a", 3)])
c = o.copy()
assert type(c) is OMD and c == o and c is not o
assert c.getlist("a") == [1, 3]
c.add("b", 4)
c.pop("a")
assert list(o.iteritems(multi=True)) == [("a", 1), ("b", 2), ("a", 3)]
