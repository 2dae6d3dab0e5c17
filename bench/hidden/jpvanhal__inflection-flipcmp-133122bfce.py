"""Hidden check: uncountable words stay, countable ones get an s"""

import inflection


def test_uncountable():
    assert inflection.pluralize("sheep") == "sheep"
    assert inflection.pluralize("Rice") == "Rice"


def test_countable():
    assert inflection.pluralize("cat") == "cats"
