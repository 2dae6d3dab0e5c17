"""Hidden check: `lift` drops a superclass's decorator when the subclass overrides the decorated method"""

import importlib
import textwrap

import venusian

REGISTER = '''
import venusian


def register(wrapped):
    def callback(context, name, ob):
        context.registered.append((name, wrapped.__name__))
    venusian.attach(wrapped, callback, category="hcheck")
    return wrapped
'''


def scan_source(tmp_path, monkeypatch, modname, body):
    (tmp_path / (modname + ".py")).write_text(REGISTER + textwrap.dedent(body))
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(modname)
    scanner = venusian.Scanner(registered=[])
    scanner.scan(module, categories=("hcheck",))
    return sorted(scanner.registered)


def test_single_lift_with_one_override(tmp_path, monkeypatch):
    body = '''
    class Base(object):
        @register
        def alpha(self):
            pass

        @register
        def beta(self):
            pass


    @venusian.lift()
    class Child(Base):
        @register
        def alpha(self):
            pass
    '''
    assert scan_source(tmp_path, monkeypatch, "hcheck_venusian_lift_one", body) == [
        ("Base", "alpha"),
        ("Base", "beta"),
        ("Child", "alpha"),
        ("Child", "beta"),
    ]


def test_chain_of_lifted_overrides(tmp_path, monkeypatch):
    body = '''
    class Base(object):
        @register
        def alpha(self):
            pass

        @register
        def beta(self):
            pass


    @venusian.lift()
    class Mid(Base):
        @register
        def alpha(self):
            pass


    @venusian.lift()
    class Leaf(Mid):
        @register
        def alpha(self):
            pass

        @register
        def beta(self):
            pass

        @register
        def gamma(self):
            pass
    '''
    assert scan_source(tmp_path, monkeypatch, "hcheck_venusian_lift_chain", body) == [
        ("Base", "alpha"),
        ("Base", "beta"),
        ("Leaf", "alpha"),
        ("Leaf", "beta"),
        ("Leaf", "gamma"),
        ("Mid", "alpha"),
        ("Mid", "beta"),
    ]
