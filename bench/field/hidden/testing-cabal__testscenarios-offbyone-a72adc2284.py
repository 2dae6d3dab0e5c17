"""Hidden check: load_tests_apply_scenarios under the (loader, tests, pattern) protocol multiplies scenarios with the loader's suiteClass"""

import sys
import types
import unittest

from testscenarios import load_tests_apply_scenarios


def make_cases(module_name):
    class Colour(unittest.TestCase):
        scenarios = [
            ("red", {"code": 0xFF0000}),
            ("green", {"code": 0x00FF00}),
            ("blue", {"code": 0x0000FF}),
        ]

        def test_code_is_primary(self):
            self.assertIn(self.code, (0xFF0000, 0x00FF00, 0x0000FF))

    class Plain(unittest.TestCase):
        def test_alone(self):
            pass

    Colour.__module__ = Plain.__module__ = module_name
    return Colour, Plain


class TaggedSuite(unittest.TestSuite):
    pass


class TaggedLoader(unittest.TestLoader):
    suiteClass = TaggedSuite


def flatten(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from flatten(t)
        else:
            yield t


def test_module_hook_through_loadTestsFromModule():
    mod = types.ModuleType("hc_scenario_hook_mod")
    mod.Colour, _ = make_cases(mod.__name__)
    mod.load_tests = load_tests_apply_scenarios
    sys.modules[mod.__name__] = mod
    try:
        suite = unittest.TestLoader().loadTestsFromModule(mod, pattern="hc_*.py")
    finally:
        del sys.modules[mod.__name__]
    tests = list(flatten(suite))
    suffixes = sorted(t.id().rsplit("(", 1)[-1] for t in tests)
    assert suffixes == ["blue)", "green)", "red)"]
    result = unittest.TestResult()
    suite.run(result)
    assert result.testsRun == 3
    assert result.wasSuccessful(), result.errors + result.failures


def test_loader_suite_class_and_mixed_suite():
    Colour, Plain = make_cases(__name__)
    standard = unittest.TestSuite(
        [Plain("test_alone"), Colour("test_code_is_primary")])
    suite = load_tests_apply_scenarios(TaggedLoader(), standard, "test*.py")
    assert type(suite) is TaggedSuite
    tests = list(flatten(suite))
    assert len(tests) == 4
    codes = sorted(getattr(t, "code", -1) for t in tests)
    assert codes == [-1, 0x0000FF, 0x00FF00, 0xFF0000]
