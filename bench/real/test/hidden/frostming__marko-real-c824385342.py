"""Hidden check: NUL characters become U+FFFD"""

import marko


def test_nul_in_paragraphs():
    assert marko.convert('x\x00y\n\n\x00') == '<p>x\ufffdy</p>\n<p>\ufffd</p>\n'


def test_nul_in_link_text_and_heading():
    assert marko.convert('[a\x00](u)') == '<p><a href="u">a\ufffd</a></p>\n'
    assert marko.convert('# t\x00\n') == '<h1>t\ufffd</h1>\n'


def test_nul_in_indented_code():
    assert marko.convert('    c\x00d\n') == '<pre><code>c\ufffdd\n</code></pre>\n'
