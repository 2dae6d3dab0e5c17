"""Hidden check: OrderedMultiDict.addlist consumes one-shot iterables once"""

from boltons.dictutils import OMD
from boltons.urlutils import OrderedMultiDict as VendoredOMD


def test_generator():
    o = OMD()
    o.addlist("k", (i * i for i in range(4)))
    assert o.getlist("k") == [0, 1, 4, 9]


def test_iterator_after_existing_values():
    o = OMD([("k", 0)])
    o.addlist("k", iter("ab"))
    assert o.getlist("k") == [0, "a", "b"]


def test_vendored_copy_in_urlutils():
    u = VendoredOMD()
    u.addlist("q", map(str, [1, 2]))
    assert u.getlist("q") == ["1", "2"]
