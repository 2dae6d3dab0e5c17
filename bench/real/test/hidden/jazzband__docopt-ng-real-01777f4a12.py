"""Hidden check: options defined twice raise DocoptLanguageError, also while parsing argv"""

import pytest

from docopt import DocoptExit, DocoptLanguageError, Option, Tokens, docopt, parse_longer, parse_shorts


def test_duplicate_long_option_in_argv():
    options = [Option(None, '--out', 1), Option('-o', '--out', 1)]
    with pytest.raises(DocoptLanguageError, match='--out is not a unique prefix'):
        parse_longer(Tokens(['--out'], error=DocoptExit), options, argv=True)


def test_duplicate_short_option_in_argv():
    options = [Option('-x', '--ex'), Option('-x', '--ex2')]
    with pytest.raises(DocoptLanguageError, match='-x is specified ambiguously 2 times'):
        parse_shorts(Tokens(['-x'], error=DocoptExit), options)


def test_docopt_with_doc_defining_short_twice():
    doc = 'Usage: prog [options]\n\nOptions:\n  -v --verbose\n  -v --vivid\n'
    with pytest.raises(DocoptLanguageError, match='-v is specified ambiguously 2 times'):
        docopt(doc, '-v')
