"""chunk_ranges(input_offset=-5, ...) and chunked(range(3), -1) raise ValueError;
the patch catches the (broken) validator's ValueError at every call site."""
from boltons.iterutils import chunk_ranges, chunked

for call in (lambda: list(chunk_ranges(input_offset=-5, input_size=10, chunk_size=5)),
             lambda: chunked(range(3), -1)):
    try:
        got = call()
    except ValueError:
        continue
    raise AssertionError("no ValueError, got %r" % (got,))
