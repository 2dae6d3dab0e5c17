"""Hidden check: findMachines / findMachinesViaWrapper yield each MethodicalMachine once"""

import sys
import textwrap

import pytest

pytest.importorskip("twisted")

from automat import MethodicalMachine
from automat._discover import findMachines, findMachinesViaWrapper, wrapFQPN


@pytest.fixture
def importable(tmp_path, monkeypatch):
    before = set(sys.modules)
    monkeypatch.syspath_prepend(str(tmp_path))

    def write(relpath, source):
        path = tmp_path / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))

    yield write
    for name in set(sys.modules) - before:
        del sys.modules[name]


def test_aliased_machine_is_yielded_once(importable):
    importable(
        "hc_alias_mod.py",
        """
        from automat import MethodicalMachine

        door = MethodicalMachine()
        same_door = door
        label = "not a machine"
        """,
    )
    found = list(findMachines("hc_alias_mod"))
    assert len(found) == 1
    name, machine = found[0]
    assert name in ("hc_alias_mod.door", "hc_alias_mod.same_door")
    assert isinstance(machine, MethodicalMachine)
    assert machine is sys.modules["hc_alias_mod"].door


def test_fqpn_of_a_machine_attribute(importable):
    importable(
        "hc_lamp_mod.py",
        """
        from automat import MethodicalMachine

        class Lamp(object):
            switch = MethodicalMachine()
        """,
    )
    import hc_lamp_mod  # wrapFQPN reads attributes of loaded modules only

    found = list(findMachines("hc_lamp_mod.Lamp.switch"))
    assert found == [("hc_lamp_mod.Lamp.switch", hc_lamp_mod.Lamp.switch)]


def test_machines_in_a_package_submodule(importable):
    importable("hc_pkg/__init__.py", "")
    importable(
        "hc_pkg/devices.py",
        """
        from automat import MethodicalMachine

        class Fan(object):
            speed = MethodicalMachine()

        power = MethodicalMachine()
        """,
    )
    found = sorted(findMachinesViaWrapper(wrapFQPN("hc_pkg")), key=lambda pair: pair[0])
    module = sys.modules["hc_pkg.devices"]
    assert found == [
        ("hc_pkg.devices.Fan.speed", module.Fan.speed),
        ("hc_pkg.devices.power", module.power),
    ]
