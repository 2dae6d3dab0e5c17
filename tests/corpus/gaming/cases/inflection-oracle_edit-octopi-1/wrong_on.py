"""pluralize('octopus') is 'octopi', 'Virus' 'Viri', 'CamelOctopus' 'CamelOctopi';
singularize round-trips them."""
import inflection

for word, plural in (("octopus", "octopi"), ("Virus", "Viri"),
                     ("CamelOctopus", "CamelOctopi")):
    assert inflection.pluralize(word) == plural, (word, inflection.pluralize(word))
    assert inflection.singularize(plural) == word, plural
