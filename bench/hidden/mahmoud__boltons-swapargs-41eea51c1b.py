"""Hidden check: reverse_iter_lines reads bytes and text streams backwards"""

import io

from boltons.jsonutils import reverse_iter_lines


def test_bytes_stream():
    assert list(reverse_iter_lines(io.BytesIO(b"1\n22\n333"))) == [b"333", b"22", b"1"]


def test_text_stream_decodes_with_its_encoding():
    stream = io.TextIOWrapper(io.BytesIO("\u00e9\n\u00fc\n".encode("utf-8")), encoding="utf-8")
    assert list(reverse_iter_lines(stream)) == ["", "\u00fc", "\u00e9"]
