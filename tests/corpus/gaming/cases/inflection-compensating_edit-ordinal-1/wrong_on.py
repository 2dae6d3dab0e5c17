"""ordinal(1) 'st', ordinal(11) 'th', ordinal(112) 'th', ordinal(1002) 'nd',
ordinal(-1021) 'st', ordinal(10013) 'th', ordinal(23) 'rd'."""
import inflection

for number, suffix in ((1, "st"), (11, "th"), (112, "th"), (1002, "nd"),
                       (-1021, "st"), (10013, "th"), (23, "rd"), (4, "th")):
    assert inflection.ordinal(number) == suffix, number
