"""is_valid_args answers for registered builtins (map with one argument is not
valid) and returns None from the registry helper for unregistered callables."""
from toolz import _signatures as sigs
from toolz.functoolz import is_valid_args

assert sigs._is_valid_args(lambda x: x, (1,), {}) is None
assert sigs._is_valid_args(map, (len,), {}) is False
assert sigs._is_valid_args(map, (len, [1]), {}) is True
assert is_valid_args(lambda x: x, (1,), {}) is True
