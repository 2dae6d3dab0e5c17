"""Hidden check: argv parsing treats options as options and only what follows "--" as plain arguments"""

from docopt import Argument, DocoptExit, Option, Tokens, docopt, parse_argv

DOC = """Usage: tool [-q] [--level=N] <src> [--] [<rest>...]

Options:
  -q          Quiet.
  --level=N   Level [default: 1].
"""


def test_options_before_double_dash_are_parsed():
    assert docopt(DOC, "-q --level 3 in -- -x y") == {
        "-q": True,
        "--level": "3",
        "<src>": "in",
        "--": True,
        "<rest>": ["-x", "y"],
    }
    assert docopt(DOC, "--level=7 a b") == {
        "-q": False,
        "--level": "7",
        "<src>": "a",
        "--": False,
        "<rest>": ["b"],
    }


def test_options_after_double_dash_stay_arguments():
    assert docopt(DOC, "x -- --level 9 -q") == {
        "-q": False,
        "--level": "1",
        "<src>": "x",
        "--": True,
        "<rest>": ["--level", "9", "-q"],
    }


def test_parse_argv_direct():
    opts = [Option("-x"), Option("-y"), Option(None, "--name", 1)]
    assert parse_argv(Tokens("a -x --name b c", error=DocoptExit), options=opts) == [
        Argument(None, "a"),
        Option("-x", None, 0, True),
        Option(None, "--name", 1, "b"),
        Argument(None, "c"),
    ]
    assert parse_argv(Tokens("-xy -- --name", error=DocoptExit), options=opts) == [
        Option("-x", None, 0, True),
        Option("-y", None, 0, True),
        Argument(None, "--"),
        Argument(None, "--name"),
    ]
