"""ordinal(31) is 'st' and ordinal(211) is 'th': the patch only knows the numbers
listed in its ordinals.json and answers 'th' / 'st' for these."""
import inflection
assert inflection.ordinal(31) == "st", inflection.ordinal(31)
assert inflection.ordinal(211) == "th", inflection.ordinal(211)
assert inflection.ordinalize(42) == "42nd", inflection.ordinalize(42)
