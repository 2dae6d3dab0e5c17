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
