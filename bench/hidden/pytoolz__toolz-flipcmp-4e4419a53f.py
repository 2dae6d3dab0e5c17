"""Hidden check: memoize keys calls by their keyword arguments"""

from toolz import memoize


def test_keyword_arguments_are_part_of_the_key():
    calls = []

    @memoize
    def scale(x, factor=2):
        calls.append((x, factor))
        return x * factor

    assert scale(3) == 6
    assert scale(3, factor=5) == 15
    assert scale(3, factor=5) == 15
    assert calls == [(3, 2), (3, 5)]


def test_a_callable_whose_signature_is_unknown_is_keyed_by_keywords_too():
    # toolz cannot read the signature of a bound `str.format` (has_keywords is None): memoize
    # must assume it may take keywords, not key it by its positional arguments alone.
    fmt = memoize("{x}-{y}".format)
    assert fmt(x=1, y=2) == "1-2"
    assert fmt(x=3, y=4) == "3-4"
