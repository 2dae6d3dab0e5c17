"""Hidden check: Stats properties and the module-level shortcuts"""

from boltons.statsutils import Stats, mean, median


def test_stats_properties():
    assert Stats([4, 1, 3, 2]).median == 2.5
    assert Stats([1, 1, 2]).max == 2


def test_shortcuts():
    assert mean([1, 2, 6]) == 3.0
    assert median([5, 3, 1, 4]) == 3.5
