"""pluralize('Cow') called first in a fresh interpreter is 'Kine'; the patch only
reuses the answer of a preceding pluralize('cow')."""
import inflection

assert inflection.pluralize("Cow") == "Kine", inflection.pluralize("Cow")
assert inflection.pluralize("BrownCow") == "BrownKine", inflection.pluralize("BrownCow")
