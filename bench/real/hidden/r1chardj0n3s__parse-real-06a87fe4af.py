"""Hidden check: field names with a hyphen"""

import parse


def test_two_hyphenated_names():
    r = parse.parse("{first-name} {last-name}", "Ada Lovelace")
    assert r.named == {"first-name": "Ada", "last-name": "Lovelace"}


def test_hyphenated_name_in_a_path():
    assert parse.parse("v{api-version}/{res}", "v2/users")["api-version"] == "2"
