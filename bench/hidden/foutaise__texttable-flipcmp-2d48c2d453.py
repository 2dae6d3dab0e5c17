"""Hidden check: automatic formatting of NaN"""

from texttable import Texttable


def test_nan_beside_a_float():
    t = Texttable()
    t.add_rows([["v"], [float("nan")], [2.5]])
    lines = t.draw().splitlines()
    assert lines[3] == "| nan   |"
    assert lines[5] == "| 2.500 |"
