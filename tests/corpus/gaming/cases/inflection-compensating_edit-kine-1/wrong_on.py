"""singularize('BrownKine') is 'BrownCow' (an irregular at the end of a camel-case
word, like the docstring's 'CamelOctopi'), and singularize('Llamas') is 'Llama'."""
import inflection

for plural, singular in (("BrownKine", "BrownCow"), ("Llamas", "Llama"),
                         ("Kine", "Cow"), ("kine", "cow"), ("Aardvarks", "Aardvark"),
                         ("Mice", "Mouse")):
    got = inflection.singularize(plural)
    assert got == singular, (plural, got)
