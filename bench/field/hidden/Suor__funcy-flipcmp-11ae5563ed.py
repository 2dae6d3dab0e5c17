"""Hidden check: omit() drops the given keys and keeps every other item"""

import os
import sys
from collections import OrderedDict

# The image does not install funcy (its tests reach the checkout through pytest's rootdir on
# sys.path, via tests/__init__.py), so the check puts the directory it runs in (the checkout)
# first on sys.path.
_ROOT = os.getcwd()
if os.path.isfile(os.path.join(_ROOT, "funcy", "colls.py")):
    sys.path.insert(0, _ROOT)
    for _name in [m for m in sys.modules if m == "funcy" or m.startswith("funcy.")]:
        del sys.modules[_name]

from funcy import decorator, omit  # noqa: E402


def test_omit_keeps_the_rest():
    assert omit({1: "x", 2: "y", 3: "z", 4: "w"}, [2, 4]) == {1: "x", 3: "z"}
    assert omit({"k": 0}, ()) == {"k": 0}
    assert omit({"k": 0}, {"k"}) == {}


def test_omit_keeps_mapping_type_and_order():
    od = OrderedDict([("z", 26), ("y", 25), ("x", 24)])
    result = omit(od, ["y", "missing"])
    assert type(result) is OrderedDict
    assert list(result.items()) == [("z", 26), ("x", 24)]


def test_decorator_var_keyword_access():
    @decorator
    def extra_kwargs(call):
        return sorted(call.options.items())

    @extra_kwargs
    def target(a, b=2, **options):
        pass

    assert target(1, b=3, color="red", size=9) == [("color", "red"), ("size", 9)]
