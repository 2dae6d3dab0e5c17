"""Hidden check: IsFalseLike(allow_strings=True) reads strings as words and numbers, and
everything else (bytes included) by its truth"""

from dirty_equals import IsFalseLike


def test_strings_that_mean_false():
    for s in ("FALSE", "fAlSe", "-0", "0e0", "0.0e5", "  0  "):
        assert s == IsFalseLike(allow_strings=True), s


def test_strings_that_do_not():
    for s in ("no", "abc", "2.5", "-1", "1e-9", "nan"):
        assert s != IsFalseLike(allow_strings=True), s


def test_other_values_by_their_truth():
    falsy = IsFalseLike(allow_strings=True)
    for v in (b"", frozenset(), 0j, range(0), bytearray()):
        assert v == falsy, v
    for v in (b"0", [0], 0.5, range(3), (None,)):
        assert v != falsy, v


def test_without_allow_strings_a_word_is_just_a_string():
    assert "false" != IsFalseLike
    assert "0" != IsFalseLike
    assert "" == IsFalseLike
