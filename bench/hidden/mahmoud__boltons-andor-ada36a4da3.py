"""Hidden check: chunked and chunk_ranges accept positive sizes"""

from boltons.iterutils import chunk_ranges, chunked


def test_chunked():
    assert chunked("abcdefg", 3) == ["abc", "def", "g"]
    assert chunked([1, 2, 3], 2, fill=0) == [[1, 2], [3, 0]]


def test_chunk_ranges():
    assert list(chunk_ranges(10, 4)) == [(0, 4), (4, 8), (8, 10)]
    assert list(chunk_ranges(10, 4, overlap_size=1)) == [(0, 4), (3, 7), (6, 10)]


def test_sizes_that_may_be_zero_still_refuse_negatives():
    # input_size may be 0 (not strictly positive), but never negative.
    assert list(chunk_ranges(0, 4)) == []
    try:
        list(chunk_ranges(-1, 4))  # a generator: it raises when iterated
    except ValueError:
        pass
    else:
        raise AssertionError("a negative input_size was accepted")
