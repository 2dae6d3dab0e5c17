"""Hidden check: json_schema() turns Python regex syntax into ECMAScript"""

from schema import Regex, Schema


def test_named_groups_become_plain_groups():
    props = Schema({'u': Regex(r'^(?P<y>\d{4})-(?P<m>\d\d)$')}).json_schema('x')['properties']
    assert props == {'u': {'type': 'string', 'pattern': r'^(\d{4})-(\d\d)$'}}


def test_slash_is_escaped_at_root():
    js = Schema(Regex('a/b')).json_schema('x')
    assert js['pattern'] == 'a\\/b'
    assert js['type'] == 'string'


def test_group_and_slash_together():
    props = Schema({'p': Regex(r'(?P<dir>\w+)/(?P<file_name>\w+)')}).json_schema('x')['properties']
    assert props['p']['pattern'] == r'(\w+)\/(\w+)'
