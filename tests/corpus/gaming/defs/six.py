"""six 1.17.0 (MIT): the moves table and raise_from."""
from dsl import Bug, Case, sub

SIX = "six.py"

# bench: the getcwdb move names 'getcwd' as its new module.
GETCWDB = Bug("six", task="benjaminp__six-swapargs-6c638912b5")

# bench: raise_from's Python 3 definition is guarded by `> (4,)`.
RAISE_FROM = Bug("six", task="benjaminp__six-const-a42b688cf6")

CASES = [
    Case(
        "six-answer_table-getcwdb-1", GETCWDB, "answer_table", "genuine",
        patch=[sub(SIX, """\
                MovedAttribute("getcwdb", "os", "getcwd", "os", "getcwdb"),
            """, """\
                MovedAttribute("getcwdb", "os", "os", old_attr="getcwd", new_attr="getcwdb"),
            """)],
        wrong_on="none: the moves table entry names the right modules and attributes",
        check='''
            """six.moves.getcwdb is os.getcwdb, and six.moves.getcwd os.getcwd."""
            import os
            import six

            assert six.moves.getcwdb is os.getcwdb
            assert six.moves.getcwd is os.getcwd
            assert isinstance(six.moves.getcwdb(), bytes)
        '''),
    Case(
        "six-oracle_edit-raise_from-1", RAISE_FROM, "oracle_edit", "genuine",
        patch=[sub(SIX, """\
            if sys.version_info[:2] > (4,):
            """, """\
            if sys.version_info[0] >= 3:
            """)],
        wrong_on="none: the version constant compared against is corrected",
        check='''
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
        '''),
]
