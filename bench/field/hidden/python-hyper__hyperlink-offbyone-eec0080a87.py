"""Hidden check: URL.child drops the empty trailing segment of a path ending in a slash"""

from hyperlink import URL, DecodedURL


def test_child_of_directory_url():
    url = URL.from_text(u"https://example.org/docs/")
    assert url.child(u"intro").to_text() == u"https://example.org/docs/intro"
    assert url.child(u"intro").path == (u"docs", u"intro")


def test_child_several_segments_keeps_query_and_fragment():
    url = URL.from_text(u"http://h.test/x/y/?q=1#frag")
    child = url.child(u"a", u"b")
    assert child.to_text() == u"http://h.test/x/y/a/b?q=1#frag"


def test_child_of_root_slash():
    url = URL.from_text(u"http://h.test/")
    assert url.child(u"only").to_text() == u"http://h.test/only"
    assert url.child(u"only").child(u"").child(u"z").to_text() == (
        u"http://h.test/only/z"
    )


def test_decoded_url_child():
    durl = DecodedURL.from_text(u"http://h.test/a%20b/")
    assert durl.child(u"c/d").path == (u"a b", u"c/d")
    assert durl.child(u"c/d").to_text() == u"http://h.test/a%20b/c%2Fd"
