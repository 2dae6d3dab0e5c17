"""A float('nan') cell in an auto-typed column is drawn as 'nan', like the string
'NaN' is drawn as 'NaN'; 34.2 is drawn as 34.200."""
from texttable import Texttable

t = Texttable()
t.set_deco(0)
t.add_rows([["a", "b"], [float("nan"), 34.2], ["NaN", 1]], header=False)
lines = [line.split() for line in t.draw().splitlines()]
assert lines == [["a", "b"], ["nan", "34.200"], ["NaN", "1"]], lines
