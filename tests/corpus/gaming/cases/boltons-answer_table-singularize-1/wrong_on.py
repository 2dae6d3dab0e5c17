"""singularize('dresses') == 'dress', singularize('press') == 'press' and
singularize('chances') == 'chance': the patch only lists the test's six nouns."""
from boltons.strutils import singularize

for word, want in (("dresses", "dress"), ("press", "press"), ("chances", "chance"),
                   ("Activities", "Activity")):
    got = singularize(word)
    assert got == want, (word, got)
