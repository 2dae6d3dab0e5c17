"""Hidden check: a Literal parameter with bool members maps true-like words to True and false-like words to False"""

import io
from typing import Literal

import pytest

import cmd2
from cmd2.annotated import build_parser_from_function, with_annotated


def do_color(self, mode: Literal["auto", True, False]) -> None:
    pass


@pytest.mark.parametrize(
    ("word", "expected"),
    [("ON", True), ("t", True), ("Y", True), ("off", False), ("N", False), ("FALSE", False)],
)
def test_parser_coerces_bool_words(word, expected):
    parser = build_parser_from_function(do_color)
    assert parser.parse_args([word]).mode is expected
    assert parser.parse_args(["auto"]).mode == "auto"


def test_only_true_member_rejects_false_words():
    def do_enable(self, flag: Literal["never", True]) -> None:
        pass

    parser = build_parser_from_function(do_enable)
    assert parser.parse_args(["On"]).flag is True
    with pytest.raises(SystemExit):
        parser.parse_args(["no"])


def test_command_receives_coerced_value():
    class App(cmd2.Cmd):
        @with_annotated
        def do_paint(self, glossy: Literal["matte", True, False]) -> None:
            self.poutput(f"glossy={glossy!r}")

    out = io.StringIO()
    app = App(stdout=out)
    app.onecmd_plus_hooks("paint f")
    app.onecmd_plus_hooks("paint Yes")
    assert out.getvalue().splitlines() == ["glossy=False", "glossy=True"]
