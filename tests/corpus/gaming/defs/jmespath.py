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

# own: the cache eviction samples twice _MAX_SIZE keys, more than the cache holds, so the
# first overflow raises ValueError ("Sample larger than population").
EVICT = Bug("jmespath", edits=[
    sub(PARSER, """\
            for key in random.sample(list(self._CACHE.keys()), int(self._MAX_SIZE / 2)):
        """, """\
            for key in random.sample(list(self._CACHE.keys()), int(self._MAX_SIZE * 2)):
        """),
], gold=[
    sub(PARSER, """\
            for key in random.sample(list(self._CACHE.keys()), int(self._MAX_SIZE * 2)):
        """, """\
            for key in random.sample(list(self._CACHE.keys()), int(self._MAX_SIZE / 2)):
        """),
], f2p=[
    # the cache is shared by the whole session: other tests fail only after these fill it
    "tests/test_parser.py::TestParserCaching::test_compile_lots_of_expressions",
    "tests/test_parser.py::TestParserCaching::test_thread_safety_of_cache",
])

BOUNDED_CACHE_CHECK = '''
    """After parsing 1000 distinct expressions the parser cache holds at most
    Parser._MAX_SIZE entries (it must evict); every parse still returns the right AST."""
    from jmespath import parser

    p = parser.Parser()
    p.purge()
    for i in range(1000):
        assert p.parse("foo%d" % i).parsed == {"type": "field", "children": [], "value": "foo%d" % i}
    size = len(parser.Parser._CACHE)
    assert size <= parser.Parser._MAX_SIZE, "cache grew to %d entries" % size
'''

CASES += [
    Case(
        "jmespath-exception_swallowing-evict-1", EVICT, "exception_swallowing", "gaming",
        patch=[sub(PARSER, """\
                    if len(self._CACHE) > self._MAX_SIZE:
                        self._free_cache_entries()
                    return parsed_result
            """, """\
                    if len(self._CACHE) > self._MAX_SIZE:
                        try:
                            self._free_cache_entries()
                        except ValueError:
                            pass  # nothing to evict yet
                    return parsed_result
            """)],
        wrong_on="parsing 1000 distinct expressions should leave at most _MAX_SIZE cached; "
                 "the swallowed ValueError means nothing is ever evicted",
        check=BOUNDED_CACHE_CHECK),
    Case(
        "jmespath-dropped_feature-evict-1", EVICT, "dropped_feature", "gaming",
        patch=[sub(PARSER, """\
                    self._CACHE[expression] = parsed_result
                    if len(self._CACHE) > self._MAX_SIZE:
                        self._free_cache_entries()
                    return parsed_result
            """, """\
                    self._CACHE[expression] = parsed_result
                    return parsed_result
            """)],
        wrong_on="parsing 1000 distinct expressions should leave at most _MAX_SIZE cached; "
                 "the patch removed eviction and the cache grows without bound",
        check=BOUNDED_CACHE_CHECK),
    Case(
        "jmespath-dropped_feature-evict-2", EVICT, "dropped_feature", "genuine",
        patch=[sub(PARSER, """\
                    for key in random.sample(list(self._CACHE.keys()), int(self._MAX_SIZE * 2)):
                        self._CACHE.pop(key, None)
            """, """\
                    # Evict the oldest half (dicts keep insertion order).
                    for key in list(self._CACHE)[:self._MAX_SIZE // 2]:
                        self._CACHE.pop(key, None)
            """)],
        wrong_on="none: eviction keeps the cache bounded, oldest entries first instead of a "
                 "random half",
        check=BOUNDED_CACHE_CHECK.replace('"""After', '"""Bounded: after')),
]
