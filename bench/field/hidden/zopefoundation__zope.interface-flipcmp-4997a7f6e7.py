"""Hidden check: `>=` between interfaces/declarations holds when they compare equal by name and module"""

import os

# The task's tests run the pure-Python implementation (the bug is in it); ask for it here too.
os.environ.setdefault("PURE_PYTHON", "1")

from zope.interface import implementedBy  # noqa: E402
from zope.interface.interface import InterfaceClass  # noqa: E402


def test_same_named_interfaces_are_greater_or_equal():
    first = InterfaceClass("IWidget", __module__="pkg.mod")
    second = InterfaceClass("IWidget", __module__="pkg.mod")
    assert first >= first
    assert first >= second
    assert second >= first


def test_ordering_by_name():
    widget = InterfaceClass("IWidget", __module__="pkg.mod")
    gadget = InterfaceClass("IGadget", __module__="pkg.mod")
    assert widget >= gadget
    assert not (gadget >= widget)
    assert not (widget >= None)


def test_implements_declarations_of_same_named_classes():
    def make():
        class Spam:
            pass

        return Spam

    first, second = implementedBy(make()), implementedBy(make())
    assert first >= second
    assert second >= first
    assert first >= first
