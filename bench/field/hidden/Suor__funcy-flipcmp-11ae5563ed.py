"""Hidden check: omit() drops the given keys and keeps every other item"""

from collections import OrderedDict

from funcy import decorator, omit


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
