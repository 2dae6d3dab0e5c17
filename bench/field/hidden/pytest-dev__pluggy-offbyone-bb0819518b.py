"""Hidden check: check_pending skips only hooks whose name starts with an underscore"""

import pytest

from pluggy import HookimplMarker, HookspecMarker, PluginManager, PluginValidationError

hookimpl = HookimplMarker("demo")
hookspec = HookspecMarker("demo")


def test_unknown_hook_with_underscore_second_raises():
    pm = PluginManager("demo")

    class Plugin:
        @hookimpl
        def x_ready(self):
            pass

    pm.register(Plugin(), name="plug")
    with pytest.raises(PluginValidationError, match="unknown hook 'x_ready'"):
        pm.check_pending()


def test_unknown_one_letter_hook_raises():
    pm = PluginManager("demo")

    class Plugin:
        @hookimpl
        def z(self):
            pass

    pm.register(Plugin(), name="plug")
    with pytest.raises(PluginValidationError, match="unknown hook 'z'"):
        pm.check_pending()


def test_private_hook_name_is_skipped():
    pm = PluginManager("demo")

    class Spec:
        @hookspec
        def known(self, arg):
            pass

    class Plugin:
        @hookimpl
        def known(self, arg):
            return arg

        @hookimpl
        def _internal(self):
            pass

    pm.add_hookspecs(Spec)
    pm.register(Plugin(), name="plug")
    pm.check_pending()
    assert pm.hook.known(arg=7) == [7]
