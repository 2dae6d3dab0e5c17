"""Hidden check: gitignore basic patterns special-case only the two-segment '**/*' form"""

from pathspec import PathSpec
from pathspec.patterns.gitignore.basic import GitIgnoreBasicPattern


def test_star_slash_matches_only_files_below_root():
    spec = PathSpec.from_lines("gitignore", ["*/"])
    files = ["top.txt", "pkg/mod.py", "pkg/sub/data.bin", "README"]
    assert sorted(spec.match_files(files)) == ["pkg/mod.py", "pkg/sub/data.bin"]
    regex, include = GitIgnoreBasicPattern.pattern_to_regex("*/")
    assert include is True
    assert regex == "/"


def test_double_star_star_with_tail_is_not_match_all():
    pattern = GitIgnoreBasicPattern("**/*/build")
    assert not pattern.match_file("notes.txt")
    assert not pattern.match_file("lib/core.py")
    assert pattern.match_file("proj/build")
    assert pattern.match_file("a/proj/build/out.o")


def test_bytes_and_negated_star_are_match_all():
    assert GitIgnoreBasicPattern.pattern_to_regex(b"*") == (b".", True)
    assert GitIgnoreBasicPattern.pattern_to_regex("!**/*") == (".", False)
