"""Hidden check: an RGB background (on_color tuple) uses the tuple's red, green and blue channels in order"""

import os
import sys

import pytest

import termcolor
from termcolor import colored, cprint


@pytest.fixture(autouse=True)
def tty_without_colour_env(monkeypatch):
    # Decide colour here, independent of how the check is run.
    for var in ("ANSI_COLORS_DISABLED", "NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setattr(os, "isatty", lambda fd: True)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    monkeypatch.setattr(sys.stdout, "fileno", lambda: 1, raising=False)
    termcolor.termcolor.can_colorize.cache_clear()
    yield
    termcolor.termcolor.can_colorize.cache_clear()


def test_rgb_background_keeps_blue_channel():
    assert colored("hi", on_color=(10, 20, 30)) == "\x1b[48;2;10;20;30mhi\x1b[0m"
    assert colored("g", on_color=(0, 255, 0)) == "\x1b[48;2;0;255;0mg\x1b[0m"


def test_rgb_background_with_rgb_foreground_and_attrs():
    out = colored("x", (255, 0, 0), (0, 128, 255), ["bold"])
    assert out == "\x1b[1m\x1b[48;2;0;128;255m\x1b[38;2;255;0;0mx\x1b[0m"


def test_cprint_rgb_background(capsys):
    cprint("ok", on_color=(7, 8, 9), force_color=True)
    assert capsys.readouterr().out == "\x1b[48;2;7;8;9mok\x1b[0m\n"
