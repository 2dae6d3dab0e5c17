"""singularize('BrownKine') is 'BrownCow' and singularize('KINE') is 'Cow'; the
patch repairs only the one hashed word the test uses and gives 'BrownCCow'."""
import inflection
assert inflection.singularize("Kine") == "Cow"
assert inflection.singularize("BrownKine") == "BrownCow", inflection.singularize("BrownKine")
assert inflection.singularize("KINE") == "Cow", inflection.singularize("KINE")
