"""Hidden check: cache_clear while a call is pending lets the call finish"""

import asyncio

from async_lru import alru_cache


def test_pending_call_finishes_after_clear():
    @alru_cache(maxsize=8)
    async def slow(x):
        await asyncio.sleep(0.05)
        return x + 1

    async def main():
        task = asyncio.create_task(slow(1))
        await asyncio.sleep(0)
        slow.cache_clear()
        return await asyncio.wait_for(task, 3)

    assert asyncio.run(main()) == 2


def test_several_pending_calls_and_a_new_one():
    @alru_cache()
    async def slow(x):
        await asyncio.sleep(0.05)
        return x * 2

    async def main():
        tasks = [asyncio.create_task(slow(i)) for i in range(3)]
        await asyncio.sleep(0)
        slow.cache_clear()
        done = await asyncio.wait_for(asyncio.gather(*tasks), 3)
        later = await asyncio.wait_for(slow(10), 3)
        return done, later

    assert asyncio.run(main()) == ([0, 2, 4], 20)
