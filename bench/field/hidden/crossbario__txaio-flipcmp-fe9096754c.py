"""Hidden check: under Twisted, txaio.add_callbacks (and gather, built on it) attaches callbacks/errbacks to a real Deferred"""

import pytest

import txaio
from twisted.internet.defer import Deferred


@pytest.fixture(autouse=True)
def twisted_framework():
    txaio.use_twisted()
    yield


def test_callback_chain_transforms_value():
    d = txaio.create_future()
    seen = []
    returned = txaio.add_callbacks(d, lambda v: v * 3, None)
    assert returned is d
    txaio.add_callbacks(d, seen.append, None)
    txaio.resolve(d, [7])
    assert seen == [[7, 7, 7]]


def test_errback_only_receives_failure():
    d = Deferred()
    caught = []

    def on_error(fail):
        caught.append(fail)
        return "recovered"

    txaio.add_callbacks(d, None, on_error)
    after = []
    txaio.add_callbacks(d, after.append, None)
    txaio.reject(d, KeyError("missing-key-zz"))
    assert len(caught) == 1
    assert isinstance(caught[0].value, KeyError)
    assert "missing-key-zz" in txaio.failure_message(caught[0])
    assert after == ["recovered"]


def test_gather_of_late_and_early_futures():
    early = txaio.create_future_success("alpha")
    late = txaio.create_future()
    out = []
    txaio.add_callbacks(txaio.gather([late, early]), out.append, None)
    assert out == []
    txaio.resolve(late, {"beta": 2})
    assert out == [[{"beta": 2}, "alpha"]]
