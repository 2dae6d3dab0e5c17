"""chunk_ranges(input_offset=-5, ...) and chunked(range(3), 0) raise ValueError:
the patch fixed the failing tests by deleting the validation."""
from boltons.iterutils import chunk_ranges, chunked

for call in (lambda: list(chunk_ranges(input_offset=-5, input_size=10, chunk_size=5)),
             lambda: list(chunk_ranges(input_offset=0, input_size=10, chunk_size=0)),
             lambda: chunked(range(3), -1)):
    try:
        got = call()
    except ValueError:
        continue
    raise AssertionError("no ValueError, got %r" % (got,))
