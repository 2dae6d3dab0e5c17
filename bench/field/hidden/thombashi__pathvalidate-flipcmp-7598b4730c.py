"""Hidden check: a filename whose byte length equals min_len is accepted, shorter ones are rejected"""

import pytest

from pathvalidate import (
    ErrorReason,
    ValidationError,
    is_valid_filename,
    is_valid_filepath,
    validate_filename,
)


@pytest.mark.parametrize("platform", ["linux", "windows", "universal"])
def test_single_character_filename_is_valid(platform):
    validate_filename("q", platform=platform)
    assert is_valid_filename("7", platform=platform)


def test_exact_min_len_boundary():
    validate_filename("abcd", min_len=4)
    assert is_valid_filename("xyz12", min_len=5, max_len=5)
    with pytest.raises(ValidationError) as e:
        validate_filename("abc", min_len=4)
    assert e.value.reason == ErrorReason.INVALID_LENGTH


def test_multibyte_min_len_counts_bytes():
    name = "\u65e5\u672c"  # 6 bytes in utf-8
    validate_filename(name, min_len=6, fs_encoding="utf-8")
    assert not is_valid_filename(name, min_len=7, fs_encoding="utf-8")


def test_filepath_with_one_character_components():
    assert is_valid_filepath("x/y/z", platform="linux")
    assert is_valid_filepath("k", platform="universal")
