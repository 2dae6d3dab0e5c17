"""parse('{:x}', 'abc', extra_types={'x': conv}, evaluate_result=False) does not
call conv until .evaluate_result(); the patch dropped the lazy path."""
import parse

calls = []


def conv(text):
    calls.append(text)
    return text.upper()


m = parse.parse("{:x}", "abc", extra_types={"x": conv}, evaluate_result=False)
assert calls == [], "converter ran before evaluate_result()"
assert isinstance(m, parse.Match), type(m)
assert m.evaluate_result().fixed == ("ABC",)
