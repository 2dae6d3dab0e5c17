from shop.syn import broken


def test_broken():
    assert broken(1) == 1
