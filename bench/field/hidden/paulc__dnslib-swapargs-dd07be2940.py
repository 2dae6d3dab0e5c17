"""Hidden check: instance_property/BYTES attributes (e.g. EDNSOption.data) can be read back after being set"""

from dnslib import DNSRecord, EDNS0, EDNSOption
from dnslib.ranges import BYTES, instance_property


class _Holder(object):
    payload = BYTES("payload")
    flag = instance_property("flag", (int, bool))


def test_instance_property_getter_returns_stored_value():
    h = _Holder()
    h.payload = bytearray(b"\x01\x02")
    h.flag = True
    assert h.payload == bytearray(b"\x01\x02")
    assert h.flag is True
    h.flag = 42
    assert h.flag == 42


def test_edns_option_data_and_zone_text():
    opt = EDNSOption(10, b"\xde\xad\xbe\xef")
    assert opt.data == b"\xde\xad\xbe\xef"
    assert opt.code == 10
    assert opt.toZone() == "; EDNS: code: 10; data: deadbeef"


def test_edns_option_round_trips_through_packet():
    q = DNSRecord.question("example.org", "AAAA")
    q.add_ar(EDNS0(udp_len=1232, opts=[EDNSOption(8, b"\x00\x01\x18\x00\x0a\x00\x00")]))
    parsed = DNSRecord.parse(q.pack())
    options = parsed.ar[0].rdata
    assert [(o.code, o.data) for o in options] == [(8, b"\x00\x01\x18\x00\x0a\x00\x00")]
