"""curry(f, -1) != curry(f, -2) (colliding hashes), curry(f, []) == curry(f, [])
(unhashable arguments), curry(f, 1, c=2) != curry(f, 1, c=3)."""
from toolz import curry


def f(a, b, c=1):
    return a + b + c


assert curry(f, -1) != curry(f, -2)
assert curry(f, []) == curry(f, [])
assert curry(f, c=[1]) != curry(f, c=[2])
assert curry(f, 1, c=2) != curry(f, 1, c=3)
assert curry(f, 1, c=2) == curry(f, 1, c=2)
assert curry(f, 1) != 1
