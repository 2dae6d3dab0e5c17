"""Hidden check: sending to a coroutine receiver needs an async wrapper (RuntimeError without
one); with one, coroutine receivers go through it and plain receivers are called directly"""

import asyncio

import pytest

from blinker import Signal


def test_a_coroutine_receiver_without_a_wrapper_is_an_error():
    sig = Signal()

    async def receiver(sender):
        return 1

    sig.connect(receiver)
    with pytest.raises(RuntimeError):
        sig.send(object())


def test_the_wrapper_runs_coroutines_only():
    sig = Signal()

    async def async_receiver(sender, **kw):
        return "async"

    def sync_receiver(sender, **kw):
        return "sync"

    sig.connect(async_receiver)
    sig.connect(sync_receiver)
    wrapped = []

    def wrapper(fn):
        wrapped.append(fn)

        def run(*args, **kwargs):
            return asyncio.run(fn(*args, **kwargs))

        return run

    results = sorted(value for _, value in sig.send(None, _async_wrapper=wrapper))
    assert results == ["async", "sync"]
    assert wrapped == [async_receiver]
