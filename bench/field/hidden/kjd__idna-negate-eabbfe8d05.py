"""Hidden check: the idna2008 incremental encoder encodes the labels it is given"""

import codecs

import idna.codec


def test_iterencode_joins_chunks():
    chunks = ["b\u00fccher.", "example.", "com"]
    assert b"".join(codecs.iterencode(chunks, "idna2008")) == b"xn--bcher-kva.example.com"
    assert b"".join(codecs.iterencode(["m\u00fcnchen", ".de"], "idna2008")) == b"xn--mnchen-3ya.de"


def test_incremental_encoder_holds_back_the_unfinished_label():
    encoder = codecs.getincrementalencoder("idna2008")()
    assert encoder.encode("www.") == b"www."
    assert encoder.encode("b\u00fccher") == b""
    assert encoder.encode(".ch", True) == b"xn--bcher-kva.ch"


def test_buffer_encode_sizes():
    encoder = idna.codec.IncrementalEncoder()
    assert encoder._buffer_encode("", "strict", True) == (b"", 0)
    assert encoder._buffer_encode("a.b", "strict", True) == (b"a.b", 3)
