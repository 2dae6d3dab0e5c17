"""Hidden check: format_invocation joins positional and keyword arguments"""

from boltons.funcutils import format_invocation


def test_both_kinds():
    assert format_invocation("f", (1, "a"), {"k": 2}) == "f(1, 'a', k=2)"


def test_one_kind_or_none():
    assert format_invocation("g") == "g()"
    assert format_invocation("h", (3,)) == "h(3)"
    assert format_invocation("i", kwargs={"z": None}) == "i(z=None)"
