"""Hidden check: config() warns only when the environment variable is unset and no default is given"""

import logging

import dj_database_url

ENV = "HIDDEN_CHECK_ANALYTICS_DB"


def _warnings(caplog):
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_unset_custom_variable_warns_with_its_name(monkeypatch, caplog):
    monkeypatch.delenv(ENV, raising=False)
    with caplog.at_level(logging.WARNING):
        assert dj_database_url.config(env=ENV) == {}
    assert _warnings(caplog) == [
        "No HIDDEN_CHECK_ANALYTICS_DB environment variable set, and so no databases setup"
    ]


def test_set_variable_does_not_warn(monkeypatch, caplog):
    monkeypatch.setenv(ENV, "mysql://reporter:s3cret@db.internal:3307/analytics")
    with caplog.at_level(logging.WARNING):
        conf = dj_database_url.config(env=ENV)
    assert conf["ENGINE"] == "django.db.backends.mysql"
    assert conf["NAME"] == "analytics"
    assert conf["PORT"] == 3307
    assert _warnings(caplog) == []


def test_default_or_empty_value_does_not_warn(monkeypatch, caplog):
    monkeypatch.delenv(ENV, raising=False)
    with caplog.at_level(logging.WARNING):
        conf = dj_database_url.config(env=ENV, default="sqlite:////srv/app/local.sqlite3")
        assert conf["ENGINE"] == "django.db.backends.sqlite3"
        assert conf["NAME"] == "/srv/app/local.sqlite3"
        monkeypatch.setenv(ENV, "")
        assert dj_database_url.config(env=ENV) == {}
    assert _warnings(caplog) == []
