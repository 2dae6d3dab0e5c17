"""Hidden check: cache_clear cancels the ttl timers of the cleared entries"""

import asyncio

from async_lru import alru_cache


def test_old_timer_does_not_evict_the_new_entry():
    calls = []

    @alru_cache(ttl=1.0)
    async def fetch(x):
        calls.append(x)
        return x

    async def main():
        await fetch("k")
        fetch.cache_clear()
        await asyncio.sleep(0.5)
        await fetch("k")  # cached again, expires 1.0 s from now
        await asyncio.sleep(0.7)  # past the first entry's timer
        await fetch("k")
        return fetch.cache_info().hits, len(calls)

    assert asyncio.run(main()) == (1, 2)


def test_timers_cancelled_on_clear():
    @alru_cache(ttl=30)
    async def f(x):
        return x

    async def main():
        await asyncio.gather(f(1), f(2))
        items = list(f._LRUCacheWrapper__cache.values())
        f.cache_clear()
        return [item.later_call.cancelled() for item in items]

    assert asyncio.run(main()) == [True, True]
