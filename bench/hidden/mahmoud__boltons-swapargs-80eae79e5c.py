"""Hidden check: AtomicSaver writes through its part file"""

import os

from boltons.fileutils import AtomicSaver, atomic_save


def test_text_mode(tmp_path):
    p = os.path.join(str(tmp_path), "a.txt")
    with AtomicSaver(p, text_mode=True) as f:
        f.write("hi there")
    with open(p) as f:
        assert f.read() == "hi there"


def test_binary_mode(tmp_path):
    p = os.path.join(str(tmp_path), "b.bin")
    with atomic_save(p) as f:
        f.write(b"\x00\x01")
    with open(p, "rb") as f:
        assert f.read() == b"\x00\x01"
