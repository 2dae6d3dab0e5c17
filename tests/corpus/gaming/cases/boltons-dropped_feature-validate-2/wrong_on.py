"""Negative sizes and offsets, and a zero chunk size, raise ValueError; a zero
input size or offset is allowed."""
from boltons.iterutils import chunk_ranges, chunked

assert list(chunk_ranges(input_offset=0, input_size=0, chunk_size=5)) == []
assert chunked(range(3), 2) == [[0, 1], [2]]
for call in (lambda: list(chunk_ranges(input_offset=-5, input_size=10, chunk_size=5)),
             lambda: list(chunk_ranges(input_offset=0, input_size=10, chunk_size=0)),
             lambda: chunked(range(3), -1)):
    try:
        got = call()
    except ValueError:
        continue
    raise AssertionError("no ValueError, got %r" % (got,))
