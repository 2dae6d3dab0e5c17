"""Hidden check: text without any recognised frontmatter parses to the defaults plus the unchanged (stripped) text"""

import io

import frontmatter


def test_parse_plain_text_returns_defaults():
    text = "\n  Just a note.\nSecond line: not yaml fm\n\n"
    metadata, content = frontmatter.parse(text, author="anon", draft=True)
    assert metadata == {"author": "anon", "draft": True}
    assert content == "Just a note.\nSecond line: not yaml fm"


def test_loads_plain_markdown():
    post = frontmatter.loads("# Heading\n\nSome *body* text.", lang="en")
    assert post.metadata == {"lang": "en"}
    assert post.content == "# Heading\n\nSome *body* text."
    assert post["lang"] == "en"


def test_load_file_object_and_bytes_without_frontmatter():
    post = frontmatter.load(io.StringIO("plain words only\n"))
    assert post.metadata == {}
    assert post.content == "plain words only"

    metadata, content = frontmatter.parse("caf\u00e9 menu".encode("utf-8"))
    assert metadata == {}
    assert content == "caf\u00e9 menu"
