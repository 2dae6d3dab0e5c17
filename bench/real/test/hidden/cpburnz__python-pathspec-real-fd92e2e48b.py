"""Hidden check: GitIgnoreSpec discards patterns with an unclosed range, as Git does"""

from pathspec import GitIgnoreSpec, PathSpec


def test_unclosed_range_pattern_discarded():
    spec = GitIgnoreSpec.from_lines(["foo[", "*.txt"])
    assert not spec.match_file("foo[")
    assert spec.match_file("notes.txt")


def test_unclosed_range_in_later_segment():
    spec = GitIgnoreSpec.from_lines(["data/[x", "log"])
    assert not spec.match_file("data/[x")
    assert spec.match_file("log")


def test_discarded_pattern_has_no_include():
    assert [p.include for p in GitIgnoreSpec.from_lines(["a[", "b"]).patterns] == [None, True]


def test_basic_gitignore_keeps_literal_and_valid_ranges():
    assert PathSpec.from_lines("gitignore", ["a[b"]).match_file("a[b")
    assert GitIgnoreSpec.from_lines(["x[ab]"]).match_file("xa")
