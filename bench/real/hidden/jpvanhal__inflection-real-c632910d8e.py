"""Hidden check: passerby pluralizes in place"""

import inflection


def test_capitalised():
    assert inflection.pluralize("Passerby") == "Passersby"


def test_plural_stays_plural():
    assert inflection.pluralize("passersby") == "passersby"
    assert inflection.singularize("passerby") == "passerby"
