"""singularize('activities') == 'activity' and 'Cities' -> 'City': the patch made
the double-s test pass by deleting the '-ies' rule."""
from boltons.strutils import singularize

for word, want in (("activities", "activity"), ("Cities", "City"),
                   ("glasses", "glass"), ("keys", "key")):
    got = singularize(word)
    assert got == want, (word, got)
