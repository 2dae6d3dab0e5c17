"""Hidden check: _Constant.__ge__ compares constants of one container by definition order and refuses constants of another container"""

import pytest

from constantly import FlagConstant, Flags, NamedConstant, Names, ValueConstant, Values


class Weekday(Names):
    MONDAY = NamedConstant()
    TUESDAY = NamedConstant()
    WEDNESDAY = NamedConstant()


class Planet(Names):
    MERCURY = NamedConstant()
    VENUS = NamedConstant()


class Port(Values):
    HTTP = ValueConstant(80)
    HTTPS = ValueConstant(443)


class Signal(Values):
    HUP = ValueConstant(1)
    INT = ValueConstant(2)


class Perm(Flags):
    READ = FlagConstant()
    WRITE = FlagConstant()


class Mode(Flags):
    FAST = FlagConstant()
    SAFE = FlagConstant()


def test_ge_within_one_container_returns_bool():
    assert Weekday.WEDNESDAY.__ge__(Weekday.MONDAY) is True
    assert Weekday.TUESDAY.__ge__(Weekday.TUESDAY) is True
    assert Weekday.MONDAY.__ge__(Weekday.WEDNESDAY) is False
    assert Port.HTTPS.__ge__(Port.HTTP) is True
    assert Perm.READ.__ge__(Perm.WRITE) is False


def test_ge_across_containers_is_not_implemented():
    assert Planet.VENUS.__ge__(Weekday.MONDAY) is NotImplemented
    assert Signal.INT.__ge__(Port.HTTP) is NotImplemented
    assert Mode.SAFE.__ge__(Perm.READ) is NotImplemented


def test_ge_operator_across_same_kind_containers_raises():
    with pytest.raises(TypeError):
        Planet.VENUS >= Weekday.MONDAY
    with pytest.raises(TypeError):
        Signal.HUP >= Port.HTTPS


def test_ge_operator_within_container():
    assert Weekday.WEDNESDAY >= Weekday.MONDAY
    assert not (Port.HTTP >= Port.HTTPS)
    assert Perm.WRITE >= Perm.WRITE
