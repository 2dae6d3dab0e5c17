"""Hidden check: padded frames read their pad length byte only when the PADDED flag is set, unpadded frames keep their whole body"""

from hyperframe.frame import DataFrame, Frame, HeadersFrame, PushPromiseFrame


def _roundtrip(frame):
    raw = frame.serialize()
    parsed, length = Frame.parse_frame_header(memoryview(raw[:9]))
    parsed.parse_body(memoryview(raw[9:9 + length]))
    return parsed


def test_unpadded_data_frame_keeps_all_bytes():
    f = DataFrame(7, data=b"\x05hyper-data", flags=["END_STREAM"])
    parsed = _roundtrip(f)
    assert isinstance(parsed, DataFrame)
    assert parsed.data == b"\x05hyper-data"
    assert parsed.pad_length == 0
    assert parsed.flags == {"END_STREAM"}


def test_padded_data_frame_strips_padding():
    f = DataFrame(3, data=b"xyz", flags=["PADDED"], pad_length=4)
    parsed = _roundtrip(f)
    assert parsed.pad_length == 4
    assert parsed.data == b"xyz"
    assert parsed.flow_controlled_length == 1 + 3 + 4


def test_headers_and_push_promise_unpadded():
    h = _roundtrip(HeadersFrame(11, data=b"\x02\x82\x86", flags=["END_HEADERS"]))
    assert h.data == b"\x02\x82\x86"
    assert h.pad_length == 0

    p = _roundtrip(PushPromiseFrame(9, promised_stream_id=14, data=b"\x84hdr"))
    assert p.promised_stream_id == 14
    assert p.data == b"\x84hdr"
    assert p.pad_length == 0
