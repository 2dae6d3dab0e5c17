"""singularize('Kine') called first in a fresh interpreter is 'Cow': the patch
answers it from an earlier singularize('kine') and is wrong without one."""
import inflection
assert inflection.singularize("Kine") == "Cow", inflection.singularize("Kine")
assert inflection.singularize("kine") == "cow"
