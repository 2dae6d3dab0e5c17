"""Hidden check: marking tokens on code with imaginary-number literals works and gives each literal its own text"""

import ast

import asttokens


def _constants(atok):
    return [
        atok.get_text(node)
        for node in ast.walk(atok.tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, complex))
    ]


def test_imaginary_literals_in_expressions():
    source = "impedance = 50 + 2.5j * omega\nphase = abs(-0.75J) / 4e3j\n"
    atok = asttokens.ASTTokens(source, parse=True)
    assert sorted(_constants(atok)) == sorted(["50", "2.5j", "0.75J", "4e3j"])
    assign = atok.tree.body[1]
    assert atok.get_text(assign.value) == "abs(-0.75J) / 4e3j"
    assert atok.get_text(assign.value.left.args[0]) == "-0.75J"


def test_imaginary_literal_positions():
    source = "def f(x=3j, *, y=(7j)):\n    return [x, 1e-2j, y]\n"
    atok = asttokens.ASTTokens(source, parse=True)
    func = atok.tree.body[0]
    default = func.args.defaults[0]
    assert atok.get_text_range(default) == (source.index("3j"), source.index("3j") + 2)
    assert atok.get_text(func.args.kw_defaults[0]) == "7j"
    returned = func.body[0].value
    assert [atok.get_text(e) for e in returned.elts] == ["x", "1e-2j", "y"]


def test_mark_tokens_on_an_existing_tree():
    source = "values = {0j: 'zero', 12_000j: 'big'}\n"
    tree = ast.parse(source)
    atok = asttokens.ASTTokens(source, tree=tree)
    keys = tree.body[0].value.keys
    assert [atok.get_text(k) for k in keys] == ["0j", "12_000j"]
    assert keys[1].first_token.string == "12_000j"
