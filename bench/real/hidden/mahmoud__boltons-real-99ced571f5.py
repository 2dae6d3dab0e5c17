"""Hidden check: JSONLIterator seeks in bytes and past the last newline"""

import io

from boltons.jsonutils import JSONLIterator


class Bounded:
    """Fails instead of looping: a stream that may be read a bounded number of times."""

    def read(self, *a):
        self.reads += 1
        if self.reads > 200:
            raise RuntimeError("read() called too often: a seek loop")
        return super().read(*a)


class BoundedBytes(Bounded, io.BytesIO):
    reads = 0


class BoundedText(Bounded, io.StringIO):
    reads = 0


def test_relative_seek_in_a_bytes_stream():
    data = b'{"a": 1}\n{"a": 2}\n{"a": 3}\n'
    assert list(JSONLIterator(BoundedBytes(data), rel_seek=0.5)) == [{"a": 3}]


def test_seek_into_the_last_line_ends():
    assert list(JSONLIterator(BoundedText("[1]\n[2]\n[3]\n[4]"), rel_seek=0.9)) == []
    assert list(JSONLIterator(BoundedBytes(b"[1]\n[22222]"), rel_seek=0.7)) == []
