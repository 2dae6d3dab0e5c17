"""Hidden check: irregular plurals with a different first letter"""

import inflection


def test_capitalised_irregular():
    assert inflection.singularize("Kine") == "Cow"


def test_same_first_letter_irregular():
    assert inflection.singularize("people") == "person"
