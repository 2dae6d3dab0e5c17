"""Hidden check: two-letter all-consonant words are capitalized normally, only three or more become acronyms"""

from titlecase import titlecase


def test_two_letter_street_abbreviations():
    assert titlecase("the bakery on elm rd") == "The Bakery on Elm Rd"
    assert titlecase("14 harbour pl north") == "14 Harbour Pl North"


def test_two_letter_units():
    assert titlecase("a fence twelve ft high") == "A Fence Twelve Ft High"
    assert titlecase("sold by the kg or lb") == "Sold by the Kg or Lb"


def test_threshold_between_two_and_three_letters():
    assert titlecase("hq of the pws and nfl") == "Hq of the PWS and NFL"
