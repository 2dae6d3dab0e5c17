"""Hidden check: a string or bytes passed as _in reaches the command's stdin whole, from its first character"""

import sh


def test_long_string_crosses_chunk_boundaries():
    text = "".join(chr(ord("a") + (i * 7) % 26) for i in range(2600))
    out = sh.cat(_in=text)
    assert len(out) == 2600
    assert out == text


def test_single_character_string():
    assert sh.cat(_in="Q") == "Q"


def test_bytes_input_counted_exactly():
    out = sh.wc("-c", _in=b"\x01\x02abc\xff")
    assert out.strip() == "6"


def test_piped_string_into_filter():
    out = sh.tr("a-c", "A-C", _in="abcabc-xyz")
    assert out == "ABCABC-xyz"
