"""Hidden check: once_per() and once_per_args() work with unhashable arguments"""

from funcy import once_per, once_per_args


def test_once_per_list_argument():
    calls = []

    @once_per("n")
    def f(n):
        calls.append(n)
        return "ok"

    assert f([1]) == "ok"
    assert f([1]) is None
    assert f([2]) == "ok"
    assert calls == [[1], [2]]


def test_once_per_args_dict_argument():
    calls = []

    @once_per_args
    def g(a, b):
        calls.append((a, b))
        return a

    assert g({"k": 1}, 2) == {"k": 1}
    assert g({"k": 1}, 2) is None
    assert g({"k": 1}, 3) == {"k": 1}
    assert len(calls) == 2


def test_hashable_arguments_unchanged():
    calls = []

    @once_per("n")
    def h(n):
        calls.append(n)

    h(1)
    h(1)
    h((2,))
    assert calls == [1, (2,)]
