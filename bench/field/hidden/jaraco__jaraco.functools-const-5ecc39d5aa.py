"""Hidden check: Throttler waits 1/max_rate seconds between calls"""

import time
import types

import pytest

import jaraco.functools
from jaraco.functools import Throttler

# The image's test extras include pytest-enabler, which turns on pytest-mypy for every
# collected file; pytest-mypy cannot name or check a file outside the directory pytest
# runs in (the checkout), so its item for this check is skipped instead of crashing pytest.
try:
    import pytest_mypy
except ImportError:  # pragma: no cover
    pytest_mypy = None
if pytest_mypy is not None:

    def _mypy_name(*, item):
        return f"[mypy] {item.path.name}"

    def _mypy_skip(self):
        pytest.skip("pytest-mypy does not check the hidden check")

    pytest_mypy.test_name_formatter = _mypy_name
    pytest_mypy.MypyFileItem.runtest = _mypy_skip


class FakeClock:
    def __init__(self, now=1000.0):
        self.now = now
        self.sleeps = []

    def time(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(
        jaraco.functools,
        'time',
        types.SimpleNamespace(time=fake.time, sleep=fake.sleep),
    )
    return fake


def test_back_to_back_calls_sleep_the_full_interval(clock):
    calls = []
    limited = Throttler(calls.append, max_rate=4)
    limited('a')
    limited('b')
    limited('c')
    assert calls == ['a', 'b', 'c']
    assert clock.sleeps == pytest.approx([0, 0.25, 0.25])


def test_sleep_is_reduced_by_elapsed_time(clock):
    limited = Throttler(lambda x: x * 2, max_rate=2)
    assert limited(3) == 6
    clock.now += 0.125
    assert limited(5) == 10
    assert clock.sleeps == pytest.approx([0, 0.375])


def test_throttled_method_waits(clock):
    class Worker:
        def run(self, value):
            return value + 1

        run = Throttler(run, max_rate=5)

    worker = Worker()
    assert worker.run(1) == 2
    assert worker.run(2) == 3
    assert clock.sleeps == pytest.approx([0, 0.2])


def test_real_calls_are_spaced():
    limited = Throttler(len, max_rate=20)
    start = time.time()
    for _ in range(4):
        limited('xy')
    assert time.time() - start >= 0.14
