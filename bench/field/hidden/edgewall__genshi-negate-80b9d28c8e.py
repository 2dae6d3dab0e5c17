"""Hidden check: XPath selection yields each matched element with its whole subtree and then continues with the rest of the stream"""

from genshi.input import XML
from genshi.path import Path
from genshi.template import MarkupTemplate


def test_select_nested_elements_with_text():
    xml = XML('<library><shelf n="a"><book>Dune</book><book>Emma</book></shelf>'
              '<shelf n="b"><book>Ivanhoe</book></shelf></library>')
    assert Path('shelf').select(xml).render(encoding=None) == (
        '<shelf n="a"><book>Dune</book><book>Emma</book></shelf>'
        '<shelf n="b"><book>Ivanhoe</book></shelf>'
    )


def test_select_descendants_with_predicate():
    xml = XML('<menu><dish kind="soup"><name>Borscht</name></dish>'
              '<dish kind="main"><name>Pilaf</name><side>Salad</side></dish></menu>')
    result = xml.select('dish[@kind="main"]').render(encoding=None)
    assert result == '<dish kind="main"><name>Pilaf</name><side>Salad</side></dish>'
    assert xml.select('.//name').render(encoding=None) == '<name>Borscht</name><name>Pilaf</name>'


def test_match_template_copies_the_matched_content():
    tmpl = MarkupTemplate('''<doc xmlns:py="http://genshi.edgewall.org/">
  <py:match path="note"><aside>${select('*')}</aside></py:match>
  <note><em>careful</em> <b>now</b></note><p>after</p>
</doc>''')
    out = tmpl.generate().render(encoding=None)
    assert '<aside><em>careful</em><b>now</b></aside>' in out
    assert '<p>after</p>' in out
