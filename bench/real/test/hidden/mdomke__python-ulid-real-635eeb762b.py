"""Hidden check: ULIDs whose timestamp is out of range are rejected"""

import uuid

import pytest

from ulid import ULID


def test_out_of_range_from_bytes_hex_int():
    with pytest.raises(ValueError):
        ULID(b"\xff" * 16)
    with pytest.raises(ValueError):
        ULID.from_hex("ff" * 16)
    with pytest.raises(ValueError):
        ULID.from_int(2**128 - 1)


def test_out_of_range_from_str():
    with pytest.raises(ValueError):
        ULID.from_str("7" + "Z" * 25)


def test_uuid_conversion_is_not_validated():
    value = uuid.UUID(int=2**128 - 1)
    assert ULID.from_uuid(value).bytes == b"\xff" * 16
    with pytest.raises(ValueError):
        ULID.from_bytes(value.bytes)
