"""parse('n={:d}', 'n=5', evaluate_result=False).evaluate_result().fixed == (5,)
and a named field lands in .named: the patch only handles one untyped field."""
import parse

r = parse.parse("n={:d}", "n=5", evaluate_result=False).evaluate_result()
assert r.fixed == (5,), r.fixed
r = parse.parse("{a} {b}", "x y", evaluate_result=False).evaluate_result()
assert r.named == {"a": "x", "b": "y"}, r.named
