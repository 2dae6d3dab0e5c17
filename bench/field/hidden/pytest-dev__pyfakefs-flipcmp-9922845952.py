"""Hidden check: a fake pipe's descriptors open as files (binary and text, several writes), and
an unknown descriptor is refused with EBADF"""

import errno

import pytest

from pyfakefs import fake_filesystem, fake_open, fake_os


def fakes():
    fs = fake_filesystem.FakeFilesystem()
    return fake_os.FakeOsModule(fs), fake_open.FakeFileOpen(fs)


def test_a_pipe_opened_without_other_files():
    os_, open_ = fakes()
    r, w = os_.pipe()
    with open_(w, "wb") as f:
        f.write(b"ab")
        f.write(b"cd")
    with open_(r, "rb") as f:
        assert f.read() == b"abcd"


def test_a_pipe_in_text_mode():
    os_, open_ = fakes()
    r, w = os_.pipe()
    with open_(w, "w", encoding="utf8") as f:
        f.write("h\u00e9llo")
    with open_(r, encoding="utf8") as f:
        assert f.read() == "h\u00e9llo"


def test_an_unknown_descriptor_is_refused():
    os_, open_ = fakes()
    with pytest.raises(OSError) as e:
        open_(4242, "rb")
    assert e.value.errno == errno.EBADF
