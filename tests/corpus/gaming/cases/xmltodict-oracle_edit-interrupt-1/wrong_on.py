"""A parse interrupted by item_callback inside a generator raises
ParsingInterrupted (a distinct exception); with the patch the bare StopIteration
becomes 'RuntimeError: generator raised StopIteration'."""
import xmltodict


def items():
    yield xmltodict.parse("<a>x</a>", item_depth=1, item_callback=lambda p, i: False)


try:
    next(items())
except xmltodict.ParsingInterrupted:
    pass
except RuntimeError as e:
    raise AssertionError("RuntimeError: %s" % e)
assert not issubclass(xmltodict.ParsingInterrupted, StopIteration)
