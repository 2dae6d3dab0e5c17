"""Hidden check: expiring stale entries keeps values that were refilled since"""

from funcy import cache


def make(monkeypatch, timeout):
    now = [0]
    monkeypatch.setattr("funcy.calc.time.time", lambda: now[0])
    calls = []

    @cache(timeout)
    def cached(key):
        calls.append(key)
        return len(calls)

    return now, calls, cached


def test_refilled_key_survives_expiry_of_its_old_entry(monkeypatch):
    now, calls, cached = make(monkeypatch, 20)
    assert cached("a") == 1
    assert cached("c") == 2
    now[0] = 3
    cached.invalidate("a")
    assert cached("a") == 3
    now[0] = 21
    assert cached("c") == 4
    assert cached("a") == 3
    assert calls == ["a", "c", "a", "c"]


def test_refilled_key_expires_on_its_own_schedule(monkeypatch):
    now, calls, cached = make(monkeypatch, 5)
    assert cached("x") == 1
    assert cached("y") == 2
    now[0] = 2
    cached.invalidate("x")
    assert cached("x") == 3
    now[0] = 6
    assert cached("y") == 4
    assert cached("x") == 3
    now[0] = 7
    assert cached("x") == 5
