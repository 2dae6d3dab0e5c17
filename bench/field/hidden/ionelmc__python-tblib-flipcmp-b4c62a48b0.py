"""Hidden check: an ExceptionGroup subclass with its own __init__ pickles through tblib with its
message and its sub-exceptions (and their tracebacks) intact"""

import pickle

from tblib import pickling_support


class Batch(ExceptionGroup):
    def __init__(self, message, excs):
        super().__init__(message, excs)
        self.size = len(excs)


def _raised(e):
    try:
        raise e
    except BaseException as caught:
        return caught


def test_group_subclass_round_trips():
    group = _raised(Batch("two failed", [_raised(KeyError("k")), _raised(ValueError(7))]))
    pickling_support.install(Batch, KeyError, ValueError)
    back = pickle.loads(pickle.dumps(group))
    assert type(back) is Batch
    assert back.message == "two failed"
    assert [type(e) for e in back.exceptions] == [KeyError, ValueError]
    assert back.exceptions[1].args == (7,)
    assert back.size == 2
    assert back.__traceback__ is not None
