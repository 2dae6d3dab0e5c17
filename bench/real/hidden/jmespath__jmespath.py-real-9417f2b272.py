"""Hidden check: the expression cache survives more expressions than it holds"""

import jmespath
from jmespath import parser


def test_many_distinct_searches():
    out = [jmespath.search("k%d" % i, {"k%d" % i: i}) for i in range(300)]
    assert out[-1] == 299 and out[150] == 150


def test_parser_keeps_working_past_its_cache_size():
    p = parser.Parser()
    last = [p.parse("a%d.b" % i) for i in range(400)][-1]
    assert last.search({"a399": {"b": 7}}) == 7
