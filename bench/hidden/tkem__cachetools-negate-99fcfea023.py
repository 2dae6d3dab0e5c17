"""Hidden check: cachetools.func decorators with and without arguments"""

import cachetools.func as F


def test_bare_decorator():
    f = F.fifo_cache(lambda x: x * 2)
    assert (f(3), f(3)) == (6, 6)
    assert f.cache_info().hits == 1


def test_decorator_with_maxsize():
    h = F.fifo_cache(maxsize=4)(lambda y: y + 1)
    assert h(1) == 2
    assert h.cache_info().maxsize == 4
    assert F.fifo_cache()(lambda: 1).cache_parameters() == {"maxsize": 128, "typed": False}
