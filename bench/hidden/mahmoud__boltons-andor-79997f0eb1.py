"""Hidden check: singularize leaves words ending in a vowel + 'ys' alone but for the s"""

from boltons.strutils import singularize


def test_vowel_y_plurals():
    assert singularize("keys") == "key"
    assert singularize("toys") == "toy"


def test_consonant_y_plurals():
    assert singularize("cities") == "city"
    assert singularize("Berries") == "Berry"


def test_vowel_ie_plurals_keep_their_ie():
    # 'ies' after a vowel is a plain plural of a word ending in 'ie', not a 'y' plural.
    assert singularize("Louies") == "Louie"
    assert singularize("zoies") == "zoie"
