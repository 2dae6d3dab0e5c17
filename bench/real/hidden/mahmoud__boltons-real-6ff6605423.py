"""Hidden check: pearson_type classifies every moment combination"""

from boltons.statsutils import Stats


def pearson(skewness, kurtosis):
    s = Stats([0])
    s.skewness = skewness
    s.kurtosis = kurtosis
    return s.pearson_type


def test_type_iv():
    assert pearson(0.5, 5.0) == 4
    assert pearson(-0.5, 5.0) == 4


def test_zero_c0():
    # 4 * kurtosis == 3 * skewness ** 2
    assert pearson(1.0, 0.75) == 1


def test_beta_unchanged():
    assert pearson(1.0, 2.0) == 1
