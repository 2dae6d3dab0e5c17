"""Hidden check: emphasis spans close exactly the <strong>/<em> tags they opened"""

import markdown2


def test_underscore_strong():
    assert markdown2.markdown("say __loud__ now") == "<p>say <strong>loud</strong> now</p>\n"


def test_triple_delimiters_close_both_tags():
    assert markdown2.markdown("***both***") == "<p><em><strong>both</strong></em></p>\n"
    assert markdown2.markdown("___x___") == "<p><em><strong>x</strong></em></p>\n"


def test_strong_around_nested_em_and_link():
    assert (
        markdown2.markdown("**a *b* c**")
        == "<p><strong>a <em>b</em> c</strong></p>\n"
    )
    assert (
        markdown2.markdown("**see [x](http://e.com) here**")
        == '<p><strong>see <a href="http://e.com">x</a> here</strong></p>\n'
    )


def test_single_em_unchanged():
    assert markdown2.markdown("*em*") == "<p><em>em</em></p>\n"
