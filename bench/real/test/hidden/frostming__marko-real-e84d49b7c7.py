"""Hidden check: a link reference definition whose title is followed by text is a paragraph"""

import marko


def test_single_quoted_title_then_text_at_end():
    assert marko.convert("[a]: /b 't' x") == "<p>[a]: /b 't' x</p>\n"


def test_after_another_paragraph():
    assert marko.convert('x\n\n[l]: /d "t"  z') == '<p>x</p>\n<p>[l]: /d &quot;t&quot;  z</p>\n'


def test_label_stays_undefined():
    out = marko.convert('[q]\n\n[q]: /dest (title) more')
    assert out == '<p>[q]</p>\n<p>[q]: /dest (title) more</p>\n'
    # a definition without trailing text still works
    assert marko.convert('[q]\n\n[q]: /dest (title)') == '<p><a href="/dest" title="title">q</a></p>\n'
