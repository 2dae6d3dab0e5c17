"""Hidden check: json_schema() puts several Or alternatives under anyOf and inlines a single one"""

from schema import And, Optional, Or, Schema, Use

DRAFT = "http://json-schema.org/draft-07/schema#"


def test_three_types_under_any_of():
    assert Schema({"n": Or(float, bool, list)}).json_schema("n-id") == {
        "$schema": DRAFT,
        "$id": "n-id",
        "type": "object",
        "properties": {
            "n": {"anyOf": [{"type": "number"}, {"type": "boolean"}, {"type": "array"}]}
        },
        "required": ["n"],
        "additionalProperties": False,
    }


def test_duplicates_and_unrepresentable_are_dropped():
    s = Schema({"n": Or(int, Use(int), int, str)})
    assert s.json_schema("d")["properties"]["n"] == {
        "anyOf": [{"type": "integer"}, {"type": "string"}]
    }
    single = Schema({Optional("m"): Or(And(int, lambda v: v > 0), lambda v: True)})
    assert single.json_schema("m")["properties"]["m"] == {"type": "integer"}


def test_root_or_of_object_and_array():
    assert Schema(Or({"a": int}, [str])).json_schema("root") == {
        "$schema": DRAFT,
        "$id": "root",
        "anyOf": [
            {
                "type": "object",
                "properties": {"a": {"type": "integer"}},
                "required": ["a"],
                "additionalProperties": False,
            },
            {"type": "array", "items": {"type": "string"}},
        ],
    }
