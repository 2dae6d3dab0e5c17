"""Hidden check: TracebackPrinter shortens traceback paths to the part after tb_base and leaves other paths untouched"""

import os

from wasabi.traceback_printer import TracebackPrinter


def _printer(**kwargs):
    tbp = TracebackPrinter(tb_range_start=0, tb_range_end=None, **kwargs)
    tbp.supports_ansi = False  # plain text output for exact comparison
    return tbp


def test_paths_inside_base_are_made_relative():
    tb = [
        ("/home/user/src/myproj/core/model.py", 12, "fit", "self.step()"),
        ("/home/user/src/myproj/core/ops.py", 40, "step", "raise ValueError(x)"),
    ]
    msg = _printer(tb_base="myproj")("Boom", tb=tb)
    assert "fit in core/model.py:12" in msg
    assert "step in core/ops.py:40" in msg
    assert "/home/user/src" not in msg
    assert "raise ValueError(x)" in msg


def test_paths_outside_base_are_kept_verbatim():
    tb = [
        ("/usr/lib/python3/runpy.py", 5, "run", "exec(code)"),
        ("/opt/app/myproj/main.py", 7, "main", "go()"),
        ("/usr/lib/python3/other.py", 99, "go", "fail()"),
    ]
    msg = _printer(tb_base="myproj")("Boom", "detail", tb=tb)
    assert "run in /usr/lib/python3/runpy.py:5" in msg
    assert "main in main.py:7" in msg
    assert "go in /usr/lib/python3/other.py:99" in msg
    assert "detail" in msg


def test_last_occurrence_of_base_is_used():
    tb = [("/x/pkg/vendor/pkg/util/helpers.py", 3, "helper", "return 1 / 0")]
    msg = _printer(tb_base="pkg")("Oops", tb=tb)
    assert "helper in util/helpers.py:3" in msg
    assert "/x/pkg" not in msg


def test_dot_base_strips_current_directory():
    cwd = os.getcwd()
    inside = os.path.join(cwd, "sub", "mod.py")
    tb = [
        (inside, 21, "work", "do()"),
        ("/definitely/not/here/lib.py", 8, "do", "boom()"),
    ]
    msg = _printer(tb_base=".")("Oops", tb=tb)
    assert "work in {}:21".format(os.path.join("sub", "mod.py")) in msg
    assert "do in /definitely/not/here/lib.py:8" in msg
