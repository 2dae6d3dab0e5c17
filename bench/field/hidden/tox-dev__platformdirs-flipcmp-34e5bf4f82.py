"""Hidden check: Windows dirs append the opinion folder (e.g. Cache) only when given, before the version"""

import os

import pytest

from platformdirs import windows
from platformdirs.windows import Windows

_FOLDERS = {
    "CSIDL_APPDATA": "W:/Home/Roam",
    "CSIDL_LOCAL_APPDATA": "W:/Home/Loc",
    "CSIDL_COMMON_APPDATA": "W:/Shared",
}


@pytest.fixture(autouse=True)
def _fake_folders(monkeypatch):
    monkeypatch.setattr(windows, "get_win_folder", lambda csidl: _FOLDERS[csidl])


def _p(base, *parts):
    return os.path.join(os.path.normpath(base), *parts)


def test_data_dirs_with_author_and_version():
    dirs = Windows(appname="Spam", appauthor="Acme", version="3.2", roaming=True)
    assert dirs.user_data_dir == _p("W:/Home/Roam", "Acme", "Spam", "3.2")
    assert dirs.site_config_dir == _p("W:/Shared", "Acme", "Spam", "3.2")
    assert dirs.user_runtime_dir == _p("W:/Home/Loc/Temp", "Acme", "Spam", "3.2")


def test_cache_dir_opinion_on_and_off():
    opinionated = Windows(appname="Eggs", appauthor=False, version="0.9")
    assert opinionated.user_cache_dir == _p("W:/Home/Loc", "Eggs", "Cache", "0.9")
    assert opinionated.site_cache_dir == _p("W:/Shared", "Eggs", "Cache", "0.9")
    plain = Windows(appname="Eggs", appauthor=False, version="0.9", opinion=False)
    assert plain.user_cache_dir == _p("W:/Home/Loc", "Eggs", "0.9")
    assert plain.user_log_dir == _p("W:/Home/Loc", "Eggs", "0.9")


def test_log_dir_without_version():
    dirs = Windows(appname="Ham", appauthor="Deli")
    assert dirs.user_log_dir == _p("W:/Home/Loc", "Deli", "Ham", "Logs")
    assert dirs.user_cache_dir == _p("W:/Home/Loc", "Deli", "Ham", "Cache")
