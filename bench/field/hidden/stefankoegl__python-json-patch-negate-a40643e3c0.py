"""Hidden check: make_patch output for reordered / moved array items applies back to the target"""

import copy
import random

import jsonpatch


def _roundtrip(src, dst):
    patch = jsonpatch.make_patch(src, dst)
    original = copy.deepcopy(src)
    assert patch.apply(copy.deepcopy(src)) == dst
    assert jsonpatch.apply_patch(copy.deepcopy(src), patch.to_string()) == dst
    assert src == original


def test_rotate_and_shuffle_lists():
    _roundtrip({"a": ["x", "y", "z", "w"]}, {"a": ["w", "x", "y", "z"]})
    _roundtrip(["a", "b", "c", "d"], ["d", "a", "c", "b"])
    _roundtrip([[1, 2], [3, 4], [5, 6]], [[5, 6], [1, 2], [3, 4]])


def test_items_moved_between_lists():
    _roundtrip({"k": [10, 20, 30], "m": [40]}, {"k": [40, 10], "m": [30, 20]})
    _roundtrip({"x": [7, 8, 9]}, {"x": [9, 7], "y": [8]})


def test_seeded_random_permutations():
    rng = random.Random(20240611)
    for _ in range(150):
        n = rng.randint(2, 7)
        items = ["v%d" % i for i in range(n)]
        src = {"left": items[: n // 2], "right": items[n // 2:]}
        pool = items[:]
        rng.shuffle(pool)
        cut = rng.randint(0, n)
        dst = {"left": pool[:cut], "right": pool[cut:]}
        _roundtrip(src, dst)
