"""Hidden check: parse_longer/parse_shorts reject a wrong token with ValueError"""

import pytest

from docopt import DocoptExit, DocoptLanguageError, Tokens, parse_longer, parse_shorts


def test_parse_longer_given_short_option():
    with pytest.raises(ValueError, match='parse_longer got what appears to be an invalid token: -v'):
        parse_longer(Tokens(['-v'], error=DocoptExit), [])


def test_parse_shorts_given_long_option():
    with pytest.raises(ValueError, match='parse_shorts got what appears to be an invalid token: --long'):
        parse_shorts(Tokens(['--long'], error=DocoptExit), [])


def test_language_error_tokens_still_value_error():
    with pytest.raises(ValueError) as info:
        parse_shorts(Tokens(['plain'], error=DocoptLanguageError), [])
    assert not isinstance(info.value, DocoptLanguageError)
    with pytest.raises(ValueError):
        parse_longer(Tokens([], error=DocoptLanguageError), [])
