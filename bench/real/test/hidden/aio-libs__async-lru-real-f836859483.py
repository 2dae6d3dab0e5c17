"""Hidden check: concurrent calls with a ttl and a small maxsize all complete"""

import asyncio

from async_lru import alru_cache


def test_gather_more_values_than_maxsize():
    @alru_cache(maxsize=2, ttl=5)
    async def square(x):
        await asyncio.sleep(0)
        return x * x

    async def main():
        return await asyncio.wait_for(asyncio.gather(*(square(i) for i in range(5))), 3)

    assert asyncio.run(main()) == [0, 1, 4, 9, 16]


def test_evicted_entry_then_cached_again():
    @alru_cache(maxsize=1, ttl=5)
    async def ident(x):
        await asyncio.sleep(0.01)
        return x

    async def main():
        first = await asyncio.wait_for(asyncio.gather(ident("a"), ident("b")), 3)
        again = await asyncio.wait_for(ident("b"), 3)
        return first, again, ident.cache_info().hits

    assert asyncio.run(main()) == (["a", "b"], "b", 1)
