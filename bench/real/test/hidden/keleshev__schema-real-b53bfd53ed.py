"""Hidden check: json_schema() describes None as {"type": "null"}"""

from schema import Optional, Or, Schema


def test_none_values_in_dict():
    props = Schema({'a': None, Optional('b'): Or(None)}).json_schema('x')['properties']
    assert props == {'a': {'type': 'null'}, 'b': {'type': 'null'}}


def test_none_in_or_with_other_types():
    props = Schema({'a': Or(None, int)}).json_schema('x')['properties']
    assert props == {'a': {'anyOf': [{'type': 'null'}, {'type': 'integer'}]}}


def test_list_of_none():
    js = Schema([None]).json_schema('x')
    assert js['items'] == {'type': 'null'}
    assert js['type'] == 'array'
