"""Hidden check: ordinals, teens included"""

import inflection


def test_ordinal_suffixes():
    assert inflection.ordinal(12) == "th"
    assert inflection.ordinal(21) == "st"


def test_ordinalize():
    assert inflection.ordinalize(113) == "113th"
    assert inflection.ordinalize(1002) == "1002nd"
