"""Hidden check: a default domain is attached to absolute paths, while '-', empty, relative and scheme-relative inputs are left alone"""

from url_normalize import url_normalize
from url_normalize.provide_url_domain import provide_url_domain


def test_provide_url_domain_prefixes_absolute_paths():
    assert provide_url_domain("/a/b.txt", default_domain="files.test") == "//files.test/a/b.txt"
    assert provide_url_domain("/", default_domain="h.io:8443") == "//h.io:8443/"
    assert provide_url_domain("/q?x=1", "api.local") == "//api.local/q?x=1"


def test_provide_url_domain_leaves_other_inputs():
    assert provide_url_domain("-", default_domain="files.test") == "-"
    assert provide_url_domain("", default_domain="files.test") == ""
    assert provide_url_domain("//cdn.test/x", default_domain="files.test") == "//cdn.test/x"
    assert provide_url_domain("rel/path", default_domain="files.test") == "rel/path"
    assert provide_url_domain("/a/b.txt", default_domain=None) == "/a/b.txt"


def test_url_normalize_uses_default_domain():
    assert (
        url_normalize("/docs/Index.HTML?b=2&a=1#Top", default_domain="Docs.Example.NET")
        == "https://docs.example.net/docs/Index.HTML?b=2&a=1#Top"
    )
    assert (
        url_normalize("/x/../y/", default_domain="shop.test", default_scheme="http")
        == "http://shop.test/y/"
    )
    assert url_normalize("//other.org/p", default_domain="shop.test") == "https://other.org/p"
