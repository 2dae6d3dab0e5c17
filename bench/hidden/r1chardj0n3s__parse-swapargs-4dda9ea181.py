"""Hidden check: unevaluated matches evaluate later"""

import parse


def test_parse_then_evaluate():
    m = parse.compile("{x:d}-{y:w}").parse("12-ab", evaluate_result=False)
    assert m.evaluate_result().named == {"x": 12, "y": "ab"}


def test_search_then_evaluate():
    m = parse.search("a{}c", "xxabcx", evaluate_result=False)
    assert m.evaluate_result().fixed == ("b",)
