"""After parsing 1000 distinct expressions the parser cache holds at most
Parser._MAX_SIZE entries (it must evict); every parse still returns the right AST."""
from jmespath import parser

p = parser.Parser()
p.purge()
for i in range(1000):
    assert p.parse("foo%d" % i).parsed == {"type": "field", "children": [], "value": "foo%d" % i}
size = len(parser.Parser._CACHE)
assert size <= parser.Parser._MAX_SIZE, "cache grew to %d entries" % size
