"""six.raise_from(ValueError('b'), KeyError('a')) sets __cause__; raise_from(e, None)
suppresses the context."""
import six

try:
    six.raise_from(ValueError("b"), KeyError("a"))
except ValueError as e:
    assert isinstance(e.__cause__, KeyError)
try:
    try:
        raise KeyError("ctx")
    except KeyError:
        six.raise_from(ValueError("c"), None)
except ValueError as e:
    assert e.__cause__ is None and e.__suppress_context__
