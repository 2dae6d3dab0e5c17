"""jmespath.search('a.b', {'a': {'b': 1}}) is 1 and parse('foo.bar.qux') is one flat
subexpression: the patch only serves the tests' seven expressions from a data
file and leaves the inverted subexpression test in place."""
import jmespath
from jmespath import parser

assert jmespath.search("a.b", {"a": {"b": 1}}) == 1, jmespath.search("a.b", {"a": {"b": 1}})
ast = parser.Parser().parse("foo.bar.qux").parsed
assert ast["type"] == "subexpression" and len(ast["children"]) == 3, ast
