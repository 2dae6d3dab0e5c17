"""OMD([('a', 1), ('a', 2)]).copy() is an OrderedMultiDict keeping both values of
'a'; the patch's dict.copy(self) is a plain dict that merely compares equal."""
from boltons.dictutils import OMD

o = OMD([("a", 1), ("b", 2), ("a", 3)])
c = o.copy()
assert type(c) is OMD, type(c)
assert c.getlist("a") == [1, 3]
c.add("b", 4)
assert o.getlist("b") == [2]
