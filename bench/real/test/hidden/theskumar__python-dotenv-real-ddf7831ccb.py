"""Hidden check: a leading UTF-8 BOM does not hide the first variable"""

import io

from dotenv import dotenv_values, load_dotenv


def test_bom_stream_keeps_first_key():
    values = dotenv_values(stream=io.StringIO("\ufeffFIRST=one\nSECOND=two\n"))
    assert values == {"FIRST": "one", "SECOND": "two"}


def test_bom_file_with_export_and_quotes(tmp_path):
    path = tmp_path / "bom.env"
    path.write_bytes("export KEY='quoted value'\nN=2\n".encode("utf-8-sig"))
    assert dotenv_values(path) == {"KEY": "quoted value", "N": "2"}


def test_load_dotenv_sets_first_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("H3_BOM_FIRST", raising=False)
    path = tmp_path / "bom.env"
    path.write_bytes("H3_BOM_FIRST=yes\n".encode("utf-8-sig"))
    assert load_dotenv(path) is True
    import os

    assert os.environ["H3_BOM_FIRST"] == "yes"
