"""Hidden check: failed and cancelled calls are not kept in the cache"""

import asyncio
import gc
import weakref

from async_lru import alru_cache


def test_failed_call_leaves_no_entry():
    calls = []

    @alru_cache(maxsize=4)
    async def parse(text):
        calls.append(text)
        return int(text)

    async def main():
        try:
            await parse("x")
        except ValueError:
            pass
        size_after_error = parse.cache_info().currsize
        assert await parse("7") == 7
        return size_after_error, parse.cache_info().currsize

    assert asyncio.run(main()) == (0, 1)


def test_exception_is_not_kept_alive():
    class Boom(Exception):
        pass

    refs = []

    @alru_cache()
    async def fail():
        exc = Boom()
        refs.append(weakref.ref(exc))
        raise exc

    async def main():
        try:
            await fail()
        except Boom:
            pass

    asyncio.run(main())
    gc.collect()
    assert refs[0]() is None
    assert fail.cache_info().currsize == 0


def test_concurrent_callers_share_the_error_then_retry():
    state = {"fail": True, "calls": 0}

    @alru_cache()
    async def flaky(key):
        state["calls"] += 1
        await asyncio.sleep(0.01)
        if state["fail"]:
            raise RuntimeError(key)
        return key.upper()

    async def main():
        results = await asyncio.gather(*(flaky("k") for _ in range(3)), return_exceptions=True)
        size = flaky.cache_info().currsize
        state["fail"] = False
        return [type(r).__name__ for r in results], size, await flaky("k"), state["calls"]

    assert asyncio.run(main()) == (["RuntimeError"] * 3, 0, "K", 2)
