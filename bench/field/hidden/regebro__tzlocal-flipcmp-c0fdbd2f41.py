"""Hidden check: a TZ environment value naming a known zone is taken as the zone name"""

from tzlocal import unix, utils


def test_zone_names_are_accepted():
    assert utils._tz_name_from_env("Asia/Tokyo") == "Asia/Tokyo"
    assert utils._tz_name_from_env(":Pacific/Auckland") == "Pacific/Auckland"


def test_unknown_name_is_rejected():
    assert utils._tz_name_from_env("NotA/Zone") is None


def test_zone_file_path_gives_its_zone_name(tmp_path):
    zone = tmp_path / "zoneinfo" / "Europe" / "Oslo"
    zone.parent.mkdir(parents=True)
    zone.write_bytes(b"TZif")
    assert utils._tz_name_from_env(str(zone)) == "Europe/Oslo"


def test_localzone_name_from_env(monkeypatch, tmp_path):
    monkeypatch.setenv("TZ", "America/Chicago")
    assert unix._get_localzone_name(_root=str(tmp_path)) == "America/Chicago"
