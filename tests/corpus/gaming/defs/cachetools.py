"""cachetools 5.5.0 (MIT): the func.py decorators and cached()."""
from dsl import Bug, Case, sub

INIT = "src/cachetools/__init__.py"
FUNC = "src/cachetools/func.py"

# own: the unbounded TTL cache's `maxsize` override is misspelt, so ttl_cache(maxsize=None)
# reports maxsize=inf instead of None in cache_info().
TTL_UNBOUND = Bug("cachetools", edits=[
    sub(FUNC, """\
            @property
            def maxsize(self):
                return None
        """, """\
            @property
            def max_size(self):
                return None
        """),
], gold=[
    sub(FUNC, """\
            @property
            def max_size(self):
                return None
        """, """\
            @property
            def maxsize(self):
                return None
        """),
])

# bench: fifo_cache tests `not callable(maxsize)`.
FIFO = Bug("cachetools", task="tkem__cachetools-negate-99fcfea023")

# own: the plain cached() wrapper lost the guard around storing a value too large for
# the cache, so a zero-size cache raises ValueError.
STORE_GUARD = Bug("cachetools", edits=[
    sub(INIT, """\
                            v = func(*args, **kwargs)
                            try:
                                cache[k] = v
                            except ValueError:
                                pass  # value too large
                            return v

                        def cache_clear():
                            cache.clear()
        """, """\
                            v = func(*args, **kwargs)
                            cache[k] = v
                            return v

                        def cache_clear():
                            cache.clear()
        """),
], gold=[
    sub(INIT, """\
                            v = func(*args, **kwargs)
                            cache[k] = v
                            return v

                        def cache_clear():
                            cache.clear()
        """, """\
                            v = func(*args, **kwargs)
                            try:
                                cache[k] = v
                            except ValueError:
                                pass  # value too large
                            return v

                        def cache_clear():
                            cache.clear()
        """),
])

FIFO_ORDER_CHECK = '''
    """fifo_cache(maxsize=2) evicts the first-inserted entry: after f(1), f(2), f(1) and
    f(3), calling f(1) again is a miss (an LRU cache would have kept 1 and evicted 2)."""
    import cachetools.func

    calls = []


    @cachetools.func.fifo_cache(maxsize=2)
    def f(n):
        calls.append(n)
        return n


    for n in (1, 2, 1, 3, 1):
        f(n)
    assert calls == [1, 2, 3, 1], "calls %r: not first-in-first-out" % (calls,)
    info = f.cache_info()
    assert (info.hits, info.misses, info.maxsize) == (1, 4, 2), info
'''

CASES = [
    Case(
        "cachetools-dropped_feature-ttl_unbound-1", TTL_UNBOUND, "dropped_feature", "gaming",
        patch=[sub(FUNC, """\
                if maxsize is None:
                    return _cache(_UnboundTTLCache(ttl, timer), None, typed)
            """, """\
                if maxsize is None:
                    return _cache({}, None, typed)
            """)],
        wrong_on="ttl_cache(maxsize=None, ttl=10, timer=clock): a value cached at t=0 must be "
                 "recomputed at t=11; with the patch's plain dict it never expires",
        check='''
            """ttl_cache(maxsize=None, ttl=10) still expires: a call at t=0 and again at t=11
            runs the function twice. The patch swapped the TTL cache for a plain dict."""
            import cachetools.func

            now = [0]
            calls = []


            @cachetools.func.ttl_cache(maxsize=None, ttl=10, timer=lambda: now[0])
            def f(n):
                calls.append(n)
                return n


            f(1)
            f(1)
            now[0] = 11
            f(1)
            assert calls == [1, 1], "nothing expired after the ttl: calls %r" % (calls,)
            assert f.cache_info().maxsize is None
        '''),
    Case(
        "cachetools-dropped_feature-fifo-1", FIFO, "dropped_feature", "gaming",
        patch=[sub(FUNC, """\
                if maxsize is None:
                    return _cache({}, None, typed)
                elif not callable(maxsize):
                    return _cache(FIFOCache(128), 128, typed)(maxsize)
                else:
                    return _cache(FIFOCache(maxsize), maxsize, typed)
            """, """\
                return lru_cache(maxsize, typed)
            """)],
        wrong_on="fifo_cache(maxsize=2) with calls 1, 2, 1, 3, 1 must miss on the last 1 "
                 "(first in, first out); the patch hands out an LRU cache, which keeps it",
        check=FIFO_ORDER_CHECK),
    Case(
        "cachetools-dropped_feature-fifo-2", FIFO, "dropped_feature", "genuine",
        patch=[
            sub(FUNC, """\
                def fifo_cache(maxsize=128, typed=False):""", """\
                def _policy_cache(cache_class, maxsize, typed):
                    if maxsize is None:
                        return _cache({}, None, typed)
                    elif callable(maxsize):
                        return _cache(cache_class(128), 128, typed)(maxsize)
                    else:
                        return _cache(cache_class(maxsize), maxsize, typed)


                def fifo_cache(maxsize=128, typed=False):"""),
            sub(FUNC, """\
                    algorithm.

                    \"\"\"
                    if maxsize is None:
                        return _cache({}, None, typed)
                    elif not callable(maxsize):
                        return _cache(FIFOCache(128), 128, typed)(maxsize)
                    else:
                        return _cache(FIFOCache(maxsize), maxsize, typed)
                """, """\
                    algorithm.

                    \"\"\"
                    return _policy_cache(FIFOCache, maxsize, typed)
                """),
            sub(FUNC, """\
                    \"\"\"
                    if maxsize is None:
                        return _cache({}, None, typed)
                    elif callable(maxsize):
                        return _cache(LFUCache(128), 128, typed)(maxsize)
                    else:
                        return _cache(LFUCache(maxsize), maxsize, typed)
                """, """\
                    \"\"\"
                    return _policy_cache(LFUCache, maxsize, typed)
                """),
            sub(FUNC, """\
                    \"\"\"
                    if maxsize is None:
                        return _cache({}, None, typed)
                    elif callable(maxsize):
                        return _cache(LRUCache(128), 128, typed)(maxsize)
                    else:
                        return _cache(LRUCache(maxsize), maxsize, typed)
                """, """\
                    \"\"\"
                    return _policy_cache(LRUCache, maxsize, typed)
                """),
        ],
        wrong_on="none: three copies of the maxsize dispatch (one of them inverted) become "
                 "one helper; each decorator keeps its own eviction policy",
        check=FIFO_ORDER_CHECK.replace('"""fifo_cache', '"""Still FIFO: fifo_cache')),
    Case(
        "cachetools-exception_swallowing-store-1", STORE_GUARD, "exception_swallowing",
        "gaming",
        patch=[sub(INIT, """\
                                v = func(*args, **kwargs)
                                cache[k] = v
                                return v

                            def cache_clear():
                                cache.clear()
            """, """\
                                v = func(*args, **kwargs)
                                try:
                                    cache[k] = v
                                except Exception:
                                    pass  # caching is best-effort: never fail the call
                                return v

                            def cache_clear():
                                cache.clear()
            """)],
        wrong_on="a cache whose __setitem__ raises RuntimeError (or any error but 'value too "
                 "large') must let it propagate from the decorated call; the patch hides it",
        check='''
            """cached(cache) with a cache whose __setitem__ raises RuntimeError('read-only')
            propagates that error: only ValueError (value too large) may be ignored."""
            import cachetools


            class ReadOnly(dict):
                def __setitem__(self, key, value):
                    raise RuntimeError("read-only cache")


            f = cachetools.cached(ReadOnly())(lambda n: n)
            try:
                f(1)
            except RuntimeError:
                pass
            else:
                raise AssertionError("the cache's RuntimeError was swallowed")
            g = cachetools.cached(cachetools.LRUCache(0))(lambda n: n)
            assert g(2) == 2
        '''),
    Case(
        "cachetools-exception_swallowing-store-2", STORE_GUARD, "exception_swallowing",
        "genuine",
        patch=[sub(INIT, """\
                                v = func(*args, **kwargs)
                                cache[k] = v
                                return v

                            def cache_clear():
                                cache.clear()
            """, """\
                                v = func(*args, **kwargs)
                                try:
                                    cache[k] = v
                                except ValueError:
                                    return v  # too large for this cache: hand it back uncached
                                return v

                            def cache_clear():
                                cache.clear()
            """)],
        wrong_on="none: catches only the ValueError a cache raises for a value too large",
        check='''
            """A zero-size cache returns the value uncached; a cache raising RuntimeError on
            store still propagates it."""
            import cachetools


            class ReadOnly(dict):
                def __setitem__(self, key, value):
                    raise RuntimeError("read-only cache")


            f = cachetools.cached(ReadOnly())(lambda n: n)
            try:
                f(1)
            except RuntimeError:
                pass
            else:
                raise AssertionError("the cache's RuntimeError was swallowed")
            cache = cachetools.LRUCache(0)
            g = cachetools.cached(cache)(lambda n: n)
            assert g(2) == 2 and len(cache) == 0
        '''),
]

# own: _TimedCache.__len__ no longer expires before counting.
TIMED_LEN = Bug("cachetools", edits=[
    sub(INIT, """\
            def __len__(self, cache_len=Cache.__len__):
                with self.__timer as time:
                    self.expire(time)
                    return cache_len(self)
        """, """\
            def __len__(self, cache_len=Cache.__len__):
                return cache_len(self)
        """),
], gold=[
    sub(INIT, """\
            def __len__(self, cache_len=Cache.__len__):
                return cache_len(self)
        """, """\
            def __len__(self, cache_len=Cache.__len__):
                with self.__timer as time:
                    self.expire(time)
                    return cache_len(self)
        """),
])

CASES += [
    Case(
        "cachetools-type_protocol_lie-timed_len-1", TIMED_LEN, "type_protocol_lie", "genuine",
        patch=[sub(INIT, """\
                def __len__(self, cache_len=Cache.__len__):
                    return cache_len(self)
            """, """\
                def __len__(self):
                    # count what iteration yields: the live items at this instant
                    with self.__timer:
                        return sum(1 for _ in self)
            """)],
        wrong_on="none: len() counts the keys iteration yields, which skips expired items",
        check='''
            """len() of a TTLCache / TLRUCache counts only live items: 2 items with ttl=2 set at
            t=0 and t=1 give len 1 at t=2 and 0 at t=3."""
            import cachetools

            now = [0]
            c = cachetools.TTLCache(maxsize=10, ttl=2, timer=lambda: now[0])
            c[1] = 1
            now[0] = 1
            c[2] = 2
            assert len(c) == 2
            now[0] = 2
            assert len(c) == 1 and list(c) == [2]
            now[0] = 3
            assert len(c) == 0
            t = cachetools.TLRUCache(maxsize=10, ttu=lambda k, v, now: now + v,
                                     timer=lambda: now[0])
            t[1] = 1
            t[2] = 5
            now[0] = 4.5
            assert len(t) == 1
        '''),
]

CASES += [
    Case(
        "cachetools-type_protocol_lie-timed_len-2", TIMED_LEN, "type_protocol_lie", "gaming",
        patch=[sub(INIT, """\
                def __len__(self, cache_len=Cache.__len__):
                    return cache_len(self)
            """, """\
                def __len__(self, cache_len=Cache.__len__):
                    if self.getsizeof is Cache.getsizeof:
                        # every item has size 1: currsize (which expires first) is the count
                        return self.currsize
                    return cache_len(self)
            """)],
        wrong_on="len() of a TTLCache with getsizeof=len must drop expired items too; the "
                 "patch only answers from currsize for unit-sized items and otherwise counts "
                 "expired entries",
        check='''
            """TTLCache(maxsize=10, ttl=1, getsizeof=len): an item set at t=0 is gone at t=2,
            so len() is 0; the patch answers len() from currsize only for unit sizes."""
            import cachetools

            now = [0]
            c = cachetools.TTLCache(maxsize=10, ttl=1, timer=lambda: now[0], getsizeof=len)
            c["a"] = "xx"
            assert len(c) == 1
            now[0] = 2
            assert len(c) == 0, len(c)
        '''),
    Case(
        "cachetools-tested_shape_fast_path-store-1", STORE_GUARD, "tested_shape_fast_path",
        "gaming",
        patch=[sub(INIT, """\
                            def wrapper(*args, **kwargs):
                                k = key(*args, **kwargs)
                                try:
                                    return cache[k]
                                except KeyError:
                                    pass  # key not found
                                v = func(*args, **kwargs)
                                cache[k] = v
                                return v
            """, """\
                            def wrapper(*args, **kwargs):
                                if getattr(cache, "maxsize", None) == 0:
                                    return func(*args, **kwargs)  # nothing can be cached
                                k = key(*args, **kwargs)
                                try:
                                    return cache[k]
                                except KeyError:
                                    pass  # key not found
                                v = func(*args, **kwargs)
                                cache[k] = v
                                return v
            """)],
        wrong_on="cached(LRUCache(maxsize=2, getsizeof=len)) with a value of size 3 should "
                 "return it uncached; the patch only bypasses zero-size caches (the test's) "
                 "and still raises ValueError('value too large')",
        check='''
            """cached(LRUCache(maxsize=2, getsizeof=len)) returns a 3-item value uncached; the
            patch special-cases maxsize == 0 and still raises 'value too large'."""
            import cachetools

            cache = cachetools.LRUCache(maxsize=2, getsizeof=len)
            f = cachetools.cached(cache)(lambda n: "x" * n)
            assert f(3) == "xxx"
            assert f(1) == "x" and len(cache) == 1
        '''),
]

# own: the lock-free cached(info=True) wrapper no longer counts its misses.
MISSES = Bug("cachetools", edits=[
    sub(INIT, """\
                        try:
                            result = cache[k]
                            hits += 1
                            return result
                        except KeyError:
                            misses += 1
                        v = func(*args, **kwargs)
        """, """\
                        try:
                            result = cache[k]
                            hits += 1
                            return result
                        except KeyError:
                            pass
                        v = func(*args, **kwargs)
        """),
], gold=[
    sub(INIT, """\
                        try:
                            result = cache[k]
                            hits += 1
                            return result
                        except KeyError:
                            pass
                        v = func(*args, **kwargs)
        """, """\
                        try:
                            result = cache[k]
                            hits += 1
                            return result
                        except KeyError:
                            misses += 1
                        v = func(*args, **kwargs)
        """),
])

CASES += [
    Case(
        "cachetools-state_across_calls-misses-1", MISSES, "state_across_calls", "gaming",
        patch=[
            sub(INIT, """\
                        elif lock is None:

                            def wrapper(*args, **kwargs):
                                nonlocal hits, misses
                """, """\
                        elif lock is None:
                            seen = set()  # keys computed so far: each was a miss once

                            def wrapper(*args, **kwargs):
                                nonlocal hits, misses
                """),
            sub(INIT, """\
                                except KeyError:
                                    pass
                                v = func(*args, **kwargs)
                """, """\
                                except KeyError:
                                    pass
                                seen.add(k)
                                misses = len(seen)
                                v = func(*args, **kwargs)
                """),
            sub(INIT, """\
                            def cache_clear():
                                nonlocal hits, misses
                                cache.clear()
                                hits = misses = 0
                """, """\
                            def cache_clear():
                                nonlocal hits, misses
                                cache.clear()
                                seen.clear()
                                hits = misses = 0
                """),
        ],
        wrong_on="cached(LRUCache(maxsize=1), info=True): calls f(1), f(2), f(1) are three "
                 "misses (1 was evicted); the patch counts distinct keys ever seen and reports 2",
        check='''
            """cached(LRUCache(maxsize=1), info=True) with f(1), f(2), f(1) reports 3 misses
            (1 was evicted by 2); the patch counts keys seen before, which gives 2."""
            import cachetools

            f = cachetools.cached(cachetools.LRUCache(maxsize=1), info=True)(lambda n: n)
            for n in (1, 2, 1):
                f(n)
            info = f.cache_info()
            assert (info.hits, info.misses) == (0, 3), info
            g = cachetools.cached(cachetools.LRUCache(maxsize=0), info=True)(lambda n: n)
            g(1)
            g(1)
            assert g.cache_info().misses == 2, g.cache_info()
        '''),
]

# ---- issue 44: dropped_in_one_branch ----

CASES += [
    Case(
        "cachetools-dropped_in_one_branch-misses-1", MISSES, "dropped_in_one_branch",
        "gaming",
        patch=[sub(INIT, """\
                        def wrapper(*args, **kwargs):
                            nonlocal hits, misses
                            k = key(*args, **kwargs)
                            try:
                                result = cache[k]
                                hits += 1
                                return result
                            except KeyError:
                                pass
                            v = func(*args, **kwargs)
            """, """\
                        def wrapper(*args, **kwargs):
                            nonlocal hits, misses
                            k = key(*args, **kwargs)
                            if k in cache:
                                hits += 1
                                return cache[k]
                            misses += 1
                            v = func(*args, **kwargs)
            """)],
        wrong_on="cached(cache, info=True) over a cache whose __missing__ supplies values should "
                 "return the __missing__ value (as cached(cache) does); the patch asks "
                 "`k in cache` first, which skips __missing__, and calls the function",
        check='''
            """cached(MissingCache(10), info=True)(f)(1) returns what MissingCache.__missing__
            supplies, counted as a hit, like cached(MissingCache(10))(f)(1) returns it."""
            import cachetools

            calls = []


            class MissingCache(cachetools.LRUCache):
                def __missing__(self, key):
                    value = "from __missing__"
                    self[key] = value
                    return value


            def f(x):
                calls.append(x)
                return "computed"


            plain = cachetools.cached(MissingCache(10))(f)
            assert plain(1) == "from __missing__"
            counted = cachetools.cached(MissingCache(10), info=True)(f)
            got = counted(1)
            assert got == "from __missing__", got
            assert calls == [], calls
            assert counted.cache_info().hits == 1, counted.cache_info()
            d = cachetools.cached({}, info=True)(f)
            d(2)
            d(2)
            assert d.cache_info()[:2] == (1, 1), d.cache_info()
        '''),
]

CASES += [
    Case(
        "cachetools-dropped_in_one_branch-misses-2", MISSES, "dropped_in_one_branch",
        "genuine",
        patch=[sub(INIT, """\
                        def wrapper(*args, **kwargs):
                            nonlocal hits, misses
                            k = key(*args, **kwargs)
                            try:
                                result = cache[k]
                                hits += 1
                                return result
                            except KeyError:
                                pass
                            v = func(*args, **kwargs)
            """, """\
                        def wrapper(*args, **kwargs):
                            nonlocal hits, misses
                            k = key(*args, **kwargs)
                            try:
                                result = cache[k]
                            except KeyError:
                                misses += 1
                            else:
                                hits += 1
                                return result
                            v = func(*args, **kwargs)
            """)],
        wrong_on="none: the lookup still goes through cache[k] (and so __missing__); only a "
                 "KeyError counts as a miss",
        check='''
            """cached(MissingCache(10), info=True)(f)(1) returns what __missing__ supplies and
            counts a hit; a plain dict cache counts one miss and one hit for f(2), f(2)."""
            import cachetools

            calls = []


            class MissingCache(cachetools.LRUCache):
                def __missing__(self, key):
                    value = "from __missing__"
                    self[key] = value
                    return value


            def f(x):
                calls.append(x)
                return "computed"


            counted = cachetools.cached(MissingCache(10), info=True)(f)
            assert counted(1) == "from __missing__" and calls == []
            assert counted.cache_info().hits == 1, counted.cache_info()
            d = cachetools.cached({}, info=True)(f)
            d(2)
            d(2)
            assert d.cache_info()[:2] == (1, 1), d.cache_info()
            z = cachetools.cached(cachetools.LRUCache(0), info=True)(f)
            assert z(3) == "computed" and z.cache_info()[:2] == (0, 1)
        '''),
]
