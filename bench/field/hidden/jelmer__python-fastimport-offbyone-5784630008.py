"""Hidden check: common_path/common_directory advance through both paths and find the true shared prefix"""

from io import BytesIO

from fastimport import helpers, parser
from fastimport.processors import filter_processor


def test_common_path_of_sibling_files():
    assert helpers.common_path(b"src/lib/x.py", b"src/lib/y.py") == b"src/lib/"
    assert helpers.common_path(b"abc", b"abd") == b"ab"
    assert helpers.common_path(b"aaaa", b"aa") == b"aa"


def test_common_directory_of_three_paths():
    paths = [b"pkg/core/one.c", b"pkg/core/two.c", b"pkg/core/sub/three.c"]
    assert helpers.common_directory(paths) == b"pkg/core/"
    assert helpers.common_directory([b"lib/a", b"lib/b"]) == b"lib/"


_STREAM = b"""\
blob
mark :1
data 3
one
blob
mark :2
data 3
two
commit refs/heads/main
mark :10
committer x <x@y> 1234798653 +0000
data 3
msg
M 644 :1 lib/pkg/a.py
M 644 :2 lib/pkg/b.py
"""


def test_filter_include_paths_reroots_at_common_directory():
    outf = BytesIO()
    proc = filter_processor.FilterProcessor(
        params={b"include_paths": [b"lib/pkg/a.py", b"lib/pkg/b.py"]}
    )
    proc.outf = outf
    proc.process(parser.ImportParser(BytesIO(_STREAM)).iter_commands)
    out = outf.getvalue()
    assert b"M 644 :1 a.py\n" in out
    assert b"M 644 :2 b.py\n" in out
    assert b"lib/pkg" not in out
