"""Hidden check: args2sh and args2cmd join with their separator"""

from boltons.strutils import args2cmd, args2sh


def test_custom_separators():
    assert args2sh(["a b", "c"], sep=";") == "'a b';c"
    assert args2cmd(["x", "y z"], sep=",") == 'x,"y z"'


def test_defaults():
    assert args2cmd(["q", "r"]) == "q r"
    assert args2sh(["p"], sep="|") == "p"
