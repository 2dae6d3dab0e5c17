"""Hidden check: EnvSource / set_env load only the environment variables that carry the prefix"""

import os

import confuse


def _clear_prefix(monkeypatch, prefix):
    for name in list(os.environ):
        if name.startswith(prefix):
            monkeypatch.delenv(name)


def test_env_source_reads_only_prefixed_variables(monkeypatch):
    _clear_prefix(monkeypatch, "HIDCHK_")
    monkeypatch.setenv("HIDCHK_PORT", "8080")
    monkeypatch.setenv("HIDCHK_DB__HOST", "db.local")
    monkeypatch.setenv("HIDCHK_DB__RETRIES", "4")
    monkeypatch.setenv("OTHER_HIDCHK_PORT", "1")
    source = confuse.EnvSource("HIDCHK_")
    assert dict(source) == {"port": 8080, "db": {"host": "db.local", "retries": 4}}


def test_env_source_builds_lists_under_prefix(monkeypatch):
    _clear_prefix(monkeypatch, "HIDCHK_")
    monkeypatch.setenv("HIDCHK_SERVERS__0", "alpha")
    monkeypatch.setenv("HIDCHK_SERVERS__1", "beta")
    monkeypatch.setenv("XHIDCHK_SERVERS__2", "gamma")
    config = confuse.RootView([confuse.EnvSource("HIDCHK_")])
    assert config["servers"].as_str_seq() == ["alpha", "beta"]
    assert config.keys() == ["servers"]


def test_set_env_uses_appname_prefix(monkeypatch):
    _clear_prefix(monkeypatch, "WIDGETTOOL_")
    monkeypatch.setenv("WIDGETTOOL_COLOR", "teal")
    monkeypatch.setenv("WIDGETTOOL_SIZE__WIDTH", "12")
    monkeypatch.setenv("GADGET_COLOR", "red")
    config = confuse.Configuration("WidgetTool", read=False)
    config.set_env()
    assert config.get() == {"color": "teal", "size": {"width": 12}}
    assert config["size"]["width"].get(int) == 12
