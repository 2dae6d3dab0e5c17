"""Hidden check: `nonlocal` is an error only when no enclosing function binds the name"""

import parso


def errors(code):
    grammar = parso.load_grammar(version="3.11")
    return [(e.start_pos, e.message) for e in grammar.iter_errors(grammar.parse(code))]


def test_closure_nonlocal_is_allowed():
    code = (
        "def counter():\n"
        "    total = 0\n"
        "    def bump(step):\n"
        "        nonlocal total\n"
        "        total += step\n"
        "        return total\n"
        "    return bump\n"
    )
    assert errors(code) == []


def test_nonlocal_two_levels_down_and_in_a_method():
    two_levels = (
        "def a():\n    n = 1\n    def b():\n        def c():\n"
        "            nonlocal n\n            n = 2\n        c()\n    b()\n    return n\n"
    )
    in_method = (
        "def make():\n    value = 1\n    class K:\n        def m(self):\n"
        "            nonlocal value\n            value = 2\n    return K\n"
    )
    assert errors(two_levels) == []
    assert errors(in_method) == []


def test_nonlocal_in_a_top_level_function_has_no_binding():
    code = "def f():\n    nonlocal missing\n    missing = 1\n"
    assert errors(code) == [((2, 13), "SyntaxError: no binding for nonlocal 'missing' found")]
