"""Hidden check: escape() escapes backslashes so escaped names match literally"""

from pathspec import PathSpec
from pathspec.patterns.gitignore.basic import GitIgnoreBasicPattern


def test_escape_str_backslash():
    assert GitIgnoreBasicPattern.escape("a\\b") == "a\\\\b"


def test_escape_bytes_backslash():
    assert GitIgnoreBasicPattern.escape(b"x\\*") == b"x\\\\\\*"


def test_escaped_name_matches_itself():
    name = "dir\\[1].txt"
    spec = PathSpec.from_lines("gitignore", [GitIgnoreBasicPattern.escape(name)])
    assert spec.match_file(name)


def test_other_specials_unchanged():
    assert GitIgnoreBasicPattern.escape("[a]!#?*") == "\\[a\\]\\!\\#\\?\\*"
