"""Hidden check: PathSpec + and += work whatever sequence types hold the patterns"""

from pathspec import PathSpec
from pathspec.patterns.gitignore.basic import GitIgnoreBasicPattern as P


def test_add_tuple_and_list():
    combined = PathSpec((P("*.py"),)) + PathSpec([P("*.md")])
    assert sorted(combined.match_files(["a.py", "b.md", "c.txt"])) == ["a.py", "b.md"]


def test_add_list_and_tuple():
    combined = PathSpec([P("*.py")]) + PathSpec((P("*.md"),))
    assert sorted(combined.match_files(["a.py", "b.md"])) == ["a.py", "b.md"]


def test_iadd_tuple_spec():
    spec = PathSpec((P("*.py"),))
    spec += PathSpec([P("*.md"), P("*.rst")])
    assert sorted(spec.match_files(["a.py", "b.md", "c.rst", "d"])) == ["a.py", "b.md", "c.rst"]


def test_iadd_does_not_mutate_callers_list():
    patterns = [P("*.py")]
    spec = PathSpec(patterns)
    spec += PathSpec([P("*.md")])
    assert len(patterns) == 1
    assert len(spec.patterns) == 2
