"""evaluate_result=False gives a Match whose evaluate_result() converts types and
names: parse('n={:d}', 'n=5', ...) -> (5,), '{a} {b}' -> named a, b."""
import parse

m = parse.parse("n={:d}", "n=5", evaluate_result=False)
assert m.evaluate_result().fixed == (5,)
assert isinstance(m.parser, parse.Parser)
r = parse.parse("{a} {b}", "x y", evaluate_result=False).evaluate_result()
assert r.named == {"a": "x", "b": "y"}
assert parse.search("n={:d}", "xx n=7", evaluate_result=False).evaluate_result().fixed == (7,)
