"""windowed_iter(5, 2) and pairwise_iter(None) raise TypeError when called, not when
iterated; windowed(range(4), 3, fill=None) ends with (3, None, None)."""
from boltons.iterutils import windowed, windowed_iter, pairwise_iter

for call in (lambda: windowed_iter(5, 2), lambda: pairwise_iter(None),
             lambda: windowed_iter(5, 2, fill=0)):
    try:
        call()
    except TypeError:
        pass
    else:
        raise AssertionError("no TypeError on call")
assert windowed(range(4), 3, fill=None) == [(0, 1, 2), (1, 2, 3), (2, 3, None),
                                            (3, None, None)]
assert windowed(range(4), 3) == [(0, 1, 2), (1, 2, 3)]
assert list(windowed_iter([], 2, fill=0)) == []
