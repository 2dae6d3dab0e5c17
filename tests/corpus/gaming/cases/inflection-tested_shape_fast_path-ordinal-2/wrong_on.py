"""Every integer from -3000 to 3000, as int, str and float, gets the English suffix,
e.g. ordinal(111) == 'th', ordinal(121) == 'st', ordinal(1.0) == 'st'."""
import inflection


def reference(n):
    n = abs(int(n))
    if n % 100 in (11, 12, 13):
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


for n in range(-3000, 3001):
    for form in (n, str(n), float(n)):
        assert inflection.ordinal(form) == reference(n), form
