"""singularize('Kine'), 'BrownKine' and 'KINE' are right whatever was called
before ('Cow', 'BrownCow', 'Cow'), in either order."""
import inflection
assert inflection.singularize("Kine") == "Cow"
assert inflection.singularize("BrownKine") == "BrownCow"
assert inflection.singularize("KINE") == "Cow"
assert inflection.singularize("kine") == "cow"
assert inflection.singularize("Kine") == "Cow"
assert inflection.singularize("People") == "Person"
