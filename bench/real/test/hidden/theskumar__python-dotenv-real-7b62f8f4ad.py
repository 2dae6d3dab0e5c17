"""Hidden check: an empty result is cached like any other"""

import io
from unittest import mock

from dotenv.main import DotEnv


def test_empty_file_is_not_read_again(tmp_path):
    path = tmp_path / "empty.env"
    path.write_text("")
    env = DotEnv(path)
    assert env.dict() == {}
    path.write_text("LATE=1\n")
    assert env.dict() == {}


def test_comment_only_stream_parsed_once():
    env = DotEnv(None, stream=io.StringIO("# just a comment\n\n"))
    with mock.patch.object(env, "parse", wraps=env.parse) as parse:
        for _ in range(3):
            assert env.dict() == {}
    assert parse.call_count == 1
