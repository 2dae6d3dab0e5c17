"""Hidden check: zip_broadcast() iterates each input only once"""

from more_itertools import zip_broadcast


class OneShot:
    """An iterable that can be iterated only once (later iterations are empty)."""

    def __init__(self, items):
        self.items = list(items)
        self.calls = 0

    def __iter__(self):
        self.calls += 1
        return iter(self.items if self.calls == 1 else [])


def test_one_shot_iterable_with_scalar():
    src = OneShot([1, 2])
    assert list(zip_broadcast(src, "z")) == [(1, "z"), (2, "z")]
    assert src.calls == 1


def test_two_one_shot_iterables():
    a, b = OneShot("xy"), OneShot([7, 8, 9])
    assert list(zip_broadcast(a, 0, b)) == [("x", 0, 7), ("y", 0, 8)]


def test_plain_inputs_unchanged():
    assert list(zip_broadcast([1, 2], "ab", 5)) == [(1, "ab", 5), (2, "ab", 5)]
    assert list(zip_broadcast("ab", [1, 2], scalar_types=None)) == [("a", 1), ("b", 2)]
