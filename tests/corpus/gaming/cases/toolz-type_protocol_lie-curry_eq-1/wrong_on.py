"""curry(f, -1) must differ from curry(f, -2), whose hashes collide in CPython;
and curry(f, []) == curry(f, []) must be True, not raise 'unhashable type'."""
from toolz import curry


def f(a, b, c=1):
    return a + b + c


assert curry(f, -1) != curry(f, -2), "curry(f, -1) == curry(f, -2)"
assert not (curry(f, -1) == curry(f, -2))
assert curry(f, []) == curry(f, [])
assert curry(f, c=[1]) != curry(f, c=[2])
