"""Hidden check: AsynchronousDeferredRunTest reports a passing Deferred test as a success, and a failing one only as a failure"""

import unittest

from twisted.internet import defer, reactor

from testtools import TestCase
from testtools.twistedsupport import AsynchronousDeferredRunTest


class Recorder(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.succeeded = []

    def addSuccess(self, test):
        super().addSuccess(test)
        self.succeeded.append(test.id())


def run(case):
    result = Recorder()
    case.run(result)
    return result


def later(value, delay=0.01):
    d = defer.Deferred()
    reactor.callLater(delay, d.callback, value)
    return d


def test_late_firing_deferred_is_a_success():
    class Slow(TestCase):
        run_tests_with = AsynchronousDeferredRunTest.make_factory(timeout=5)

        def setUp(self):
            super().setUp()
            self.seen = []
            return later("ready").addCallback(self.seen.append)

        def test_counts(self):
            d = later(21)
            d.addCallback(lambda n: self.assertEqual(["ready"], self.seen) or n * 2)
            d.addCallback(self.assertEqual, 42)
            return d

    case = Slow("test_counts")
    result = run(case)
    assert result.errors == [] and result.failures == []
    assert result.succeeded == [case.id()]


def test_failed_assertion_in_callback_is_only_a_failure():
    class Wrong(TestCase):
        run_tests_with = AsynchronousDeferredRunTest.make_factory(timeout=5)

        def test_mismatch(self):
            return later("spam").addCallback(self.assertEqual, "eggs")

    case = Wrong("test_mismatch")
    result = run(case)
    assert len(result.failures) == 1
    assert result.errors == []
    assert result.succeeded == []


def test_failing_cleanup_is_an_error_not_a_success():
    class Messy(TestCase):
        run_tests_with = AsynchronousDeferredRunTest.make_factory(timeout=5)

        def test_ok_body(self):
            self.addCleanup(lambda: defer.fail(LookupError("cleanup broke")))
            return later(None)

    case = Messy("test_ok_body")
    result = run(case)
    assert len(result.errors) == 1
    assert "cleanup broke" in result.errors[0][1]
    assert result.succeeded == []
