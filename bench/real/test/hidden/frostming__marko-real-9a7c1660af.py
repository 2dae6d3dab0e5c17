"""Hidden check: GFM alerts match their type case-insensitively, alone on the header line"""

from marko.ext.gfm import gfm


def test_lowercase_and_mixed_case_types():
    assert gfm.convert('> [!tip]\n> be careful') == (
        '<blockquote class="alert alert-tip">\n<p>Tip</p>\n<p>be careful</p>\n</blockquote>\n'
    )
    assert gfm.convert('> [!Warning]\n> x') == (
        '<blockquote class="alert alert-warning">\n<p>Warning</p>\n<p>x</p>\n</blockquote>\n'
    )


def test_alert_type_is_normalised_in_ast():
    doc = gfm.parse('> [!important]\n> z')
    assert type(doc.children[0]).__name__ == 'Alert'
    assert doc.children[0].alert_type == 'IMPORTANT'


def test_text_after_marker_is_a_plain_quote():
    assert gfm.convert('> [!NOTE] inline text\n> more') == (
        '<blockquote>\n<p>[!NOTE] inline text\nmore</p>\n</blockquote>\n'
    )
