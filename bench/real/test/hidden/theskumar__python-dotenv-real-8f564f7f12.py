"""Hidden check: set_key adds a newline before a new entry when the file lacks one"""

from dotenv import dotenv_values, set_key


def test_append_after_value_without_newline(tmp_path):
    path = tmp_path / "a.env"
    path.write_text("HOST=localhost")
    assert set_key(path, "PORT", "5432") == (True, "PORT", "5432")
    assert path.read_text() == "HOST=localhost\nPORT='5432'\n"
    assert dotenv_values(path) == {"HOST": "localhost", "PORT": "5432"}


def test_append_after_comment_without_newline(tmp_path):
    path = tmp_path / "b.env"
    path.write_text("A=1\n# last line")
    set_key(path, "B", "2", quote_mode="never", export=True)
    assert path.read_text() == "A=1\n# last line\nexport B=2\n"


def test_replacing_keeps_file_and_appending_twice(tmp_path):
    path = tmp_path / "c.env"
    path.write_text("X=1\nY=2")
    set_key(path, "Z", "3", quote_mode="never")
    set_key(path, "W", "4", quote_mode="never")
    assert path.read_text() == "X=1\nY=2\nZ=3\nW=4\n"
