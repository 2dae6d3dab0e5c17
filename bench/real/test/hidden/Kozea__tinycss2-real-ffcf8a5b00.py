"""Hidden check: serializing a function whose last argument is an empty function"""

import tinycss2


def roundtrip(css):
    return tinycss2.serialize(tinycss2.parse_component_value_list(css))


def test_nested_empty_function():
    assert roundtrip('a: f(g())') == 'a: f(g())'
    assert roundtrip('url(x) rgb(a(b(c())))') == 'url(x) rgb(a(b(c())))'


def test_empty_function_after_other_arguments():
    assert roundtrip('x: var(--a, calc())') == 'x: var(--a, calc())'
    assert roundtrip('min(1px, max())') == 'min(1px, max())'


def test_declarations_and_rules_round_trip():
    css = 'width: calc(1px + min()); height: f(g(h()))'
    decls = tinycss2.parse_declaration_list(css)
    assert tinycss2.serialize(decls) == css + ';'
    rules = tinycss2.parse_rule_list('a { b: f(g()) }')
    assert tinycss2.serialize(rules) == 'a { b: f(g()) }'
    assert tinycss2.serialize(rules[0].content) == ' b: f(g()) '
