"""Hidden check: findMachines / findMachinesViaWrapper yield each MethodicalMachine once"""

import os
import sys
import textwrap

import pytest

# Twisted pulls Automat from PyPI into the image, which shadows the checkout; the project's
# tests reach the checkout through pytest's rootdir on sys.path, so the check does the same
# from the directory it runs in (the checkout).
_ROOT = os.getcwd()
if os.path.isfile(os.path.join(_ROOT, "automat", "_discover.py")):
    sys.path.insert(0, _ROOT)
    for _name in [m for m in sys.modules if m == "automat" or m.startswith("automat.")]:
        del sys.modules[_name]

pytest.importorskip("twisted")

from automat import MethodicalMachine  # noqa: E402
from automat._discover import findMachines, findMachinesViaWrapper, wrapFQPN  # noqa: E402


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
