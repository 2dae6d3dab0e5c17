"""ordinal(-1) (an int, the tests pass strings) is 'st', ordinal(-102) 'nd', ordinal(-11)
'th'; ordinal(10 ** 17 + 1) is 'st' and ordinal(10 ** 18 + 2) 'nd'."""
import inflection

for number, suffix in ((-1, "st"), (-102, "nd"), (-11, "th"), (-1003, "rd"),
                       (10 ** 17 + 1, "st"), (10 ** 18 + 2, "nd"), ("-23", "rd"),
                       (7, "th"), ("112", "th")):
    got = inflection.ordinal(number)
    assert got == suffix, (number, got)
assert inflection.ordinalize(10 ** 17 + 1) == "100000000000000001st"
