"""Hidden check: a leading UTF-8 BOM is ignored when parsing"""

from iniconfig import IniConfig


def test_bom_data_with_several_sections():
    ini = IniConfig("cfg.ini", data="\ufeff[first]\na = 1\n\n[second]\nb = 2\n")
    assert [s.name for s in ini] == ["first", "second"]
    assert ini["first"]["a"] == "1"
    assert ini.get("second", "b") == "2"
    assert ini.lineof("second", "b") == 5


def test_bom_file_with_continuation_lines(tmp_path):
    path = tmp_path / "bom.ini"
    path.write_bytes("[paths]\nnames =\n  x\n  y\n".encode("utf-8-sig"))
    ini = IniConfig(path)
    assert ini["paths"]["names"] == "x\ny"
    assert "paths" in ini


def test_parse_with_bom_strips_inline_comments(tmp_path):
    path = tmp_path / "bom2.ini"
    path.write_bytes("[tool]\nkey = value # note\n".encode("utf-8-sig"))
    ini = IniConfig.parse(path)
    assert ini["tool"]["key"] == "value"
