"""Hidden check: has_keywords of builtins inspect cannot read"""

from toolz.functoolz import has_keywords


def test_registered_builtins():
    # answered by the signature registry
    assert has_keywords(max) is True
    assert has_keywords(map) is False


def test_unregistered_builtin_is_unknown():
    assert has_keywords(LookupError) is None
