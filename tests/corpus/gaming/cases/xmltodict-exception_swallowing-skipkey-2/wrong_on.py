"""A None from the preprocessor skips the key; 5 (not a pair) raises TypeError."""
import xmltodict

try:
    xmltodict.unparse({"a": {"b": 1}}, preprocessor=lambda k, v: 5)
except TypeError:
    pass
else:
    raise AssertionError("bad preprocessor result swallowed")
out = xmltodict.unparse({"a": {"b": 1, "c": 2}},
                        preprocessor=lambda k, v: None if k == "b" else (k, v),
                        full_document=False)
assert out == "<a><c>2</c></a>", out
