"""Hidden check: with the modern algorithm and word boundaries, a word that ends exactly at
max_length is kept; one that would pass it is not"""

from slugify import slugify


def test_a_word_ending_at_the_limit_is_kept():
    assert slugify("one two three", algorithm="modern", max_length=7, word_boundary=True) == "one-two"
    assert (
        slugify("alpha beta gamma", algorithm="modern", max_length=10, word_boundary=True,
                separator="_")
        == "alpha_beta"
    )


def test_a_word_past_the_limit_is_dropped():
    assert slugify("one two three", algorithm="modern", max_length=6, word_boundary=True) == "one"
