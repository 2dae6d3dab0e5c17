"""Hidden check: defaults of Optional subclasses are applied"""

from schema import Optional, Schema


class Opt(Optional):
    pass


class DeeperOpt(Opt):
    pass


def test_subclass_default_value():
    assert Schema({Opt('a', default=1): int, 'b': str}).validate({'b': 'x'}) == {'b': 'x', 'a': 1}


def test_sub_subclass_callable_default():
    assert Schema({DeeperOpt('n', default=list): list}).validate({}) == {'n': []}


def test_mixed_with_plain_optional():
    out = Schema({Opt('k', default=lambda: 'v'): str, Optional('z', default=0): int}).validate({})
    assert out == {'k': 'v', 'z': 0}
    assert Schema({Opt('k', default=5): int}).validate({'k': 7}) == {'k': 7}
