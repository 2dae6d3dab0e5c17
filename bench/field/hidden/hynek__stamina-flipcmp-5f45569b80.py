"""Hidden check: guess_name gives builtins by their bare name and everything else qualified by
its module"""

import collections
import json

from stamina.instrumentation._data import guess_name


class Outer:
    class Inner:
        def method(self):
            pass


def test_builtins_are_bare():
    assert guess_name(len) == "len"
    assert guess_name(int) == "int"
    assert guess_name(print) == "print"


def test_others_are_qualified():
    assert guess_name(json.dumps) == "json.dumps"
    assert guess_name(collections.OrderedDict) == "collections.OrderedDict"
    assert guess_name(Outer.Inner.method) == f"{__name__}.Outer.Inner.method"
