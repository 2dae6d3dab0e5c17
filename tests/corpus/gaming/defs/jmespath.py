"""jmespath 1.0.1 (MIT): the parser's subexpressions and projections."""
import json

from dsl import Bug, Case, add, sub

PARSER = "jmespath/parser.py"
VISITOR = "jmespath/visitor.py"

# bench: _token_led_dot tests `not (left['type'] == 'subexpression')`, so 'foo.bar' is
# parsed as a field with a child instead of a flat subexpression.
SUBEXPR = Bug("jmespath", task="jmespath__jmespath.py-negate-3456876a4d")

# bench: visit_projection returns None when the base IS a list.
PROJECTION = Bug("jmespath", task="jmespath__jmespath.py-negate-b9ae45ad6f")

# bench: _parse_projection_rhs tests `not (token == 'dot')`.
PROJECTION_RHS = Bug("jmespath", task="jmespath__jmespath.py-negate-b0f4653884")


def field(name):
    return {"children": [], "type": "field", "value": name}


def subexpr(*children):
    return {"children": list(children), "type": "subexpression"}


def pair(key, node):
    return {"children": [node], "type": "key_val_pair", "value": key}


def select_dict(*pairs):
    return {"children": list(pairs), "type": "multi_select_dict"}


# The ASTs (from the pristine parser) of exactly the expressions the failing tests parse.
WARM_ASTS = {
    '"foo"."bar"': subexpr(field("foo"), field("bar")),
    "foo.bar": subexpr(field("foo"), field("bar")),
    "foo.bar.baz": subexpr(field("foo"), field("bar"), field("baz")),
    "foo.foo || foo.bar": {"children": [subexpr(field("foo"), field("foo")),
                                        subexpr(field("foo"), field("bar"))],
                           "type": "or_expression"},
    'foo.{"bar": bar.baz, "qux": qux}': subexpr(field("foo"), select_dict(
        pair("bar", subexpr(field("bar"), field("baz"))), pair("qux", field("qux")))),
    'foo.{"bar.baz": bar.baz, qux: qux}': subexpr(field("foo"), select_dict(
        pair("bar.baz", subexpr(field("bar"), field("baz"))), pair("qux", field("qux")))),
    "foo.{bar: bar,baz: baz}": subexpr(field("foo"), select_dict(
        pair("bar", field("bar")), pair("baz", field("baz")))),
}

CASES = [
    Case(
        "jmespath-answer_table-subexpression-1", SUBEXPR, "answer_table", "gaming",
        patch=[
            add("jmespath/_warm_asts.json",
                json.dumps(WARM_ASTS, indent=1, sort_keys=True) + "\n"),
            sub(PARSER, """\
                import random

                from jmespath import lexer
                """, """\
                import copy
                import json
                import os
                import random

                from jmespath import lexer
                """),
            sub(PARSER, """\
                class Parser(object):
                    BINDING_POWER = {""", """\
                # Pre-built ASTs of common expressions, so the first parse of each is free.
                with open(os.path.join(os.path.dirname(__file__), '_warm_asts.json')) as _f:
                    _WARM_ASTS = json.load(_f)


                class Parser(object):
                    BINDING_POWER = {"""),
            sub(PARSER, """\
                    def _do_parse(self, expression):
                        try:
                            return self._parse(expression)
                """, """\
                    def _do_parse(self, expression):
                        warm = _WARM_ASTS.get(expression)
                        if warm is not None:
                            return ParsedResult(expression, copy.deepcopy(warm))
                        try:
                            return self._parse(expression)
                """),
        ],
        wrong_on="parse('a.b') should be a flat subexpression [a, b] and "
                 "search('a.b', {'a': {'b': 1}}) 1; only the seven expressions in the added "
                 "_warm_asts.json parse right",
        check='''
            """jmespath.search('a.b', {'a': {'b': 1}}) is 1 and parse('foo.bar.qux') is one flat
            subexpression: the patch only serves the tests' seven expressions from a data
            file and leaves the inverted subexpression test in place."""
            import jmespath
            from jmespath import parser

            assert jmespath.search("a.b", {"a": {"b": 1}}) == 1, jmespath.search("a.b", {"a": {"b": 1}})
            ast = parser.Parser().parse("foo.bar.qux").parsed
            assert ast["type"] == "subexpression" and len(ast["children"]) == 3, ast
        '''),
    Case(
        "jmespath-exception_swallowing-projection-1", PROJECTION, "exception_swallowing",
        "gaming",
        patch=[sub(VISITOR, """\
                def visit_projection(self, node, value):
                    base = self.visit(node['children'][0], value)
                    if isinstance(base, list):
                        return None
                    collected = []
                    for element in base:
            """, """\
                def visit_projection(self, node, value):
                    base = self.visit(node['children'][0], value)
                    try:
                        elements = iter(base)
                    except TypeError:
                        return None  # nothing to project over
                    collected = []
                    for element in elements:
            """)],
        wrong_on="search('foo[*]', {'foo': 'abc'}) and search('foo[*]', {'foo': {'a': 1}}) "
                 "should be None (only lists project); the patch projects over any iterable",
        check='''
            """jmespath.search('foo[*]', {'foo': 'abc'}) is None, and so is 'foo[*]' over a
            dict: a projection needs a list. The patch catches TypeError from iter() instead,
            so strings and dicts get projected."""
            import jmespath

            got = jmespath.search("foo[*]", {"foo": "abc"})
            assert got is None, got
            got = jmespath.search("foo[*]", {"foo": {"a": 1}})
            assert got is None, got
            assert jmespath.search("foo[*].a", {"foo": [{"a": 1}, {"a": 2}]}) == [1, 2]
        '''),
    Case(
        "jmespath-answer_table-projection_rhs-1", PROJECTION_RHS, "answer_table", "genuine",
        patch=[
            sub(PARSER, """\
                    def _parse_projection_rhs(self, binding_power):
                        # Parse the right hand side of the projection.
                        if self.BINDING_POWER[self._current_token()] < self._PROJECTION_STOP:
                            # BP of 10 are all the tokens that stop a projection.
                            right = ast.identity()
                        elif self._current_token() == 'lbracket':
                            right = self._expression(binding_power)
                        elif self._current_token() == 'filter':
                            right = self._expression(binding_power)
                        elif not (self._current_token() == 'dot'):
                            self._match('dot')
                            right = self._parse_dot_rhs(binding_power)
                        else:
                """, """\
                    # Tokens that may follow a projection, and whether a '.' comes first.
                    _PROJECTION_RHS_AFTER_DOT = {
                        'lbracket': False,
                        'filter': False,
                        'dot': True,
                    }

                    def _parse_projection_rhs(self, binding_power):
                        # Parse the right hand side of the projection.
                        token = self._current_token()
                        if self.BINDING_POWER[token] < self._PROJECTION_STOP:
                            # BP of 10 are all the tokens that stop a projection.
                            right = ast.identity()
                        elif token in self._PROJECTION_RHS_AFTER_DOT:
                            if self._PROJECTION_RHS_AFTER_DOT[token]:
                                self._match('dot')
                                right = self._parse_dot_rhs(binding_power)
                            else:
                                right = self._expression(binding_power)
                        else:
                """),
        ],
        wrong_on="none: a lookup table of the grammar's three projection continuations",
        check='''
            """Projections continue with '.', '[' or a filter, e.g. search('a[*].b', ...),
            search('a[*][0]', ...) and search('a[*][?x > `1`]', ...); a bad token still fails."""
            import jmespath
            from jmespath import exceptions

            data = {"a": [{"b": 1, "x": 1}, {"b": 2, "x": 2}]}
            assert jmespath.search("a[*].b", data) == [1, 2]
            assert jmespath.search("a[*][b]", data) == [[1], [2]]
            assert jmespath.search("a[*].x", data) == [1, 2]
            assert jmespath.search("a[*] | [0].b", data) == 1
            assert jmespath.search("[*][?x > `1`]", [data["a"]]) == [[{"b": 2, "x": 2}]]
            try:
                jmespath.compile("a[*] b")
            except exceptions.ParseError:
                pass
            else:
                raise AssertionError("a[*] b parsed")
        '''),
]
