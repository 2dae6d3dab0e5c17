"""Hidden check: Unpack detection (_is_unpack) accepts ordinary type parameters, so TypeAliasType and generic arity checks work"""

import pytest

from typing_extensions import (
    Generic,
    NamedTuple,
    ParamSpec,
    TypeAliasType,
    TypeVar,
    TypeVarTuple,
    Unpack,
)

K = TypeVar("K")
V = TypeVar("V", default=int)
Ts = TypeVarTuple("Ts")
P = ParamSpec("P")


def test_type_alias_with_params_and_default():
    Mapping2 = TypeAliasType("Mapping2", dict[K, V], type_params=(K, V))
    assert Mapping2.__parameters__ == (K, V)
    assert Mapping2.__type_params__ == (K, V)
    assert Mapping2[str, bytes].__args__ == (str, bytes)
    assert repr(Mapping2[str]) == "Mapping2[str]"


def test_type_alias_with_typevartuple_and_paramspec():
    Row = TypeAliasType("Row", tuple[K, Unpack[Ts]], type_params=(K, Ts))
    assert Row[int, str, float].__args__ == (int, str, float)
    Hook = TypeAliasType("Hook", int, type_params=(P,))
    assert Hook.__parameters__ == (P,)
    with pytest.raises(TypeError, match="Expected a type param"):
        TypeAliasType("Bad", int, type_params=(Unpack[Ts],))


def test_generic_arity_error_message():
    class Pair(Generic[K, V]):
        pass

    assert Pair[bytes].__args__ == (bytes, int)
    with pytest.raises(TypeError, match=r"Too many arguments for .*Pair.*actual 3, expected 2"):
        Pair[int, str, float]


def test_generic_namedtuple_arity_error():
    class Slot(NamedTuple, Generic[K]):
        key: K
        hits: int = 0

    assert Slot[str](key="a") == ("a", 0)
    with pytest.raises(TypeError, match=r"Too many arguments for .*Slot.*actual 2, expected 1"):
        Slot[str, int]
