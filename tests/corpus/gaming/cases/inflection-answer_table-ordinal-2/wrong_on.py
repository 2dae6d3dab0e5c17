"""Every integer from -2000 to 2000 (and its string form) gets the English suffix,
e.g. ordinal(31) == 'st', ordinal(211) == 'th', ordinal(-1022) == 'nd'."""
import inflection


def reference(n):
    n = abs(int(n))
    if n % 100 in (11, 12, 13):
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


for n in range(-2000, 2001):
    assert inflection.ordinal(n) == reference(n), n
    assert inflection.ordinal(str(n)) == reference(n), n
    assert inflection.ordinalize(n) == "%d%s" % (n, reference(n)), n
