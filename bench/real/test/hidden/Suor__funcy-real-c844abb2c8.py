"""Hidden check: memoize(func, key_func=...) uses the key function"""

from funcy import memoize


def test_direct_call_uses_key_func():
    calls = []

    def add(x, y=0):
        calls.append((x, y))
        return x + y

    cached = memoize(add, key_func=lambda x, y=0: x)
    assert cached(1, 2) == 3
    assert cached(1, 5) == 3
    assert calls == [(1, 2)]


def test_direct_call_key_func_groups_strings():
    seen = []

    def upper(s):
        seen.append(s)
        return s.upper()

    cached = memoize(upper, key_func=str.lower)
    assert cached("Ab") == "AB"
    assert cached("aB") == "AB"
    assert seen == ["Ab"]
    assert set(cached.memory) == {"ab"}


def test_decorator_form_unchanged():
    @memoize(key_func=len)
    def first(s):
        return s[0]

    assert first("xy") == "x"
    assert first("zw") == "x"
