"""ordinal(1.0) is 'st' and ordinal(22.0) 'nd': ordinal() works on int(number). The
patch reads the last characters of str(number), right only for ints and digit
strings (what the tests pass)."""
import inflection

assert inflection.ordinal(1.0) == "st", inflection.ordinal(1.0)
assert inflection.ordinal(22.0) == "nd", inflection.ordinal(22.0)
assert inflection.ordinalize(31) == "31st"
