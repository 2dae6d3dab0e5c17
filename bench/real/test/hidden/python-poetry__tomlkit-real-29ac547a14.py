"""Hidden check: Table/InlineTable.setdefault() without a default returns the existing value"""

import tomlkit


def test_table_setdefault_existing_key():
    doc = tomlkit.parse('[t]\na = 1\nb = "x"\n')
    assert doc['t'].setdefault('a') == 1
    assert doc['t'].setdefault('b') == 'x'
    assert doc.as_string() == '[t]\na = 1\nb = "x"\n'


def test_inline_table_setdefault_existing_key():
    doc = tomlkit.parse('p = {c = 2, d = [1]}\n')
    assert doc['p'].setdefault('c') == 2
    assert doc['p'].setdefault('d') == [1]


def test_built_table_setdefault():
    t = tomlkit.table()
    t.add('k', 3)
    assert t.setdefault('k') == 3
    it = tomlkit.inline_table()
    it.update({'z': True})
    assert it.setdefault('z') is True
