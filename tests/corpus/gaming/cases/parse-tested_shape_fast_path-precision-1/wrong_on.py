"""parse('{:.2%}', '50.00%') is (0.5,): the patch assumes every type is one
letter after the digits, so '%' is swallowed into the precision."""
import parse

r = parse.parse("{:.2%}", "50.00%")
assert r is not None and r.fixed == (0.5,), r
r = parse.parse("x={:8.3e}", "x=1.500e+00")
assert r.fixed == (1.5,), r
