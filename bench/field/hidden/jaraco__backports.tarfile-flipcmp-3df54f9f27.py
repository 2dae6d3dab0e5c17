"""Hidden check: itn encodes zero as an octal number field, so zero-valued header fields are written"""

import io

from backports import tarfile


def test_itn_zero_is_octal_in_every_format():
    assert tarfile.itn(0, 8, tarfile.USTAR_FORMAT) == b"0000000\x00"
    assert tarfile.itn(0, 8, tarfile.PAX_FORMAT) == b"0000000\x00"
    assert tarfile.itn(0, 12, tarfile.GNU_FORMAT) == b"00000000000\x00"


def test_gnu_header_of_zero_fields():
    info = tarfile.TarInfo("empty.txt")
    info.size = 0
    info.mtime = 0
    info.uid = 0
    info.gid = 0
    info.mode = 0o644
    buf = info.tobuf(tarfile.GNU_FORMAT)
    assert buf[108:116] == b"0000000\x00"  # uid
    assert buf[124:136] == b"00000000000\x00"  # size
    assert buf[136:148] == b"00000000000\x00"  # mtime
    assert buf[148:156] == b"007572\x00 "  # checksum


def test_pax_archive_with_empty_member_round_trips():
    info = tarfile.TarInfo("empty.txt")
    info.size = 0
    info.mtime = 0
    info.uid = 0
    info.gid = 0
    info.mode = 0o644
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.addfile(info, io.BytesIO(b""))
    data.seek(0)
    with tarfile.open(fileobj=data) as tar:
        members = [(m.name, m.size, m.mtime, m.uid, m.mode) for m in tar.getmembers()]
    assert members == [("empty.txt", 0, 0, 0, 0o644)]
