"""Hidden check: random_sample keeps order and is reproducible"""

from toolz import random_sample


def test_probability_one_keeps_everything():
    assert list(random_sample(1.0, "xyz", random_state=3)) == ["x", "y", "z"]


def test_probability_zero_keeps_nothing():
    assert list(random_sample(0.0, range(50))) == []


def test_seeded_samples_agree():
    a = list(random_sample(0.5, range(40), random_state=7))
    b = list(random_sample(0.5, range(40), random_state=7))
    assert a == b and a == sorted(a) and 0 < len(a) < 40
