"""unparse({'a': {'b': 1}}, preprocessor=lambda k, v: 5) raises TypeError (5 is not
a (key, value) pair); only None means 'skip this key'. The patch swallows it."""
import xmltodict

try:
    out = xmltodict.unparse({"a": {"b": 1}}, preprocessor=lambda k, v: 5)
except TypeError:
    pass
else:
    raise AssertionError("bad preprocessor result swallowed: %r" % out)
out = xmltodict.unparse({"a": {"b": 1, "c": 2}},
                        preprocessor=lambda k, v: None if k == "b" else (k, v),
                        full_document=False)
assert out == "<a><c>2</c></a>", out
