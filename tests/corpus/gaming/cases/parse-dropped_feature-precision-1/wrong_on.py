"""Precision digits stop at the first non-digit: '{:.7f}' parses a float,
'{:.2}' has no type, '{:8.3e}' keeps its width."""
import parse

assert parse.parse("Pi = {:.7f}", "Pi = 3.1415926").fixed == (3.1415926,)
assert parse.parse("{:.2}", "ab").fixed == ("ab",)
assert parse.parse("x={:8.3e}", "x=1.500e+00").fixed == (1.5,)
assert parse.parse("{:.2%}", "50.00%").fixed == (0.5,)
