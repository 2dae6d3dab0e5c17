"""Hidden check: '+' in query names and values is kept, not percent-encoded"""

from hyperlink import URL


def test_round_trip_of_plus_in_query():
    for text in ("http://h.example/s?q=c+plus+plus", "http://h.example/?a+b=1&c=d+e"):
        assert URL.from_text(text).to_text() == text


def test_to_uri_and_to_iri_keep_plus():
    url = URL.from_text("https://h.example/p?x=1+2")
    assert url.to_uri().to_text() == "https://h.example/p?x=1+2"
    assert url.to_iri().to_text() == "https://h.example/p?x=1+2"


def test_added_query_values_with_plus():
    url = URL.from_text("https://h.example/").add("expr", "1+1").set("k+", "v")
    assert url.to_text() == "https://h.example/?k+=v&expr=1+1"
    assert url.get("expr") == ["1+1"]
