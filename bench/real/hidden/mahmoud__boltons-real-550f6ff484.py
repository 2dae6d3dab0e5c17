"""Hidden check: ThresholdCounter.update adds mapping counts"""

from boltons.cacheutils import ThresholdCounter


def test_mapping_counts():
    t = ThresholdCounter(0.1)
    t.update({"x": 3, "y": 1})
    assert sorted(t.items()) == [("x", 3), ("y", 1)]


def test_iterable_counts_unchanged():
    t = ThresholdCounter(0.1)
    t.update(["q", "q", "r"])
    assert sorted(t.items()) == [("q", 2), ("r", 1)]
