"""Hidden check: link and image matches give the destination and title groups, not the whole matched text"""

import marko
from marko.inline_parser import MatchObj


def test_inline_link_with_title():
    html = marko.convert('see [the docs](https://d.example/x "Title") now\n')
    assert html == '<p>see <a href="https://d.example/x" title="Title">the docs</a> now</p>\n'


def test_image_and_reference_link():
    assert marko.convert("![alt *text*](/img.png)\n") == (
        '<p><img src="/img.png" alt="alt text" /></p>\n'
    )
    assert marko.convert('[ref][r]\n\n[r]: /u "T"\n') == (
        '<p><a href="/u" title="T">ref</a></p>\n'
    )


def test_link_element_fields():
    doc = marko.parse('[x **y**](/dest "tt")\n')
    link = doc.children[0].children[0]
    assert link.dest == "/dest"
    assert link.title == "tt"


def test_match_obj_groups():
    m = MatchObj("link", "say [hi](u) ok", 4, 11, (5, 7, "hi"), (9, 10, "u"))
    assert m.group() == "[hi](u)"
    assert m.group(0) == "[hi](u)"
    assert m.group(1) == "hi"
    assert m.group(2) == "u"
