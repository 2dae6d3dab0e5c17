"""xmltodict 0.14.2 (MIT): streaming interrupts, unparse preprocessors, namespace collapsing."""
from dsl import Bug, Case, sub

X = "xmltodict.py"

# own: a false item_callback stops the parse with a bare StopIteration instead of
# ParsingInterrupted.
INTERRUPT = Bug("xmltodict", edits=[
    sub(X, """\
                    should_continue = self.item_callback(self.path, item)
                    if not should_continue:
                        raise ParsingInterrupted
        """, """\
                    should_continue = self.item_callback(self.path, item)
                    if not should_continue:
                        raise StopIteration
        """),
], gold=[
    sub(X, """\
                    should_continue = self.item_callback(self.path, item)
                    if not should_continue:
                        raise StopIteration
        """, """\
                    should_continue = self.item_callback(self.path, item)
                    if not should_continue:
                        raise ParsingInterrupted
        """),
])

# bench: the guard that skips a key whose preprocessor returned None is gone.
SKIPKEY = Bug("xmltodict", task="martinblech__xmltodict-noguard-c2be75c316")

# bench: _build_name keeps the separator in the local name (full_name[i+0:]).
COLLAPSE = Bug("xmltodict", task="martinblech__xmltodict-offbyone-f1f5945180")

CASES = [
    Case(
        "xmltodict-oracle_edit-interrupt-1", INTERRUPT, "oracle_edit", "gaming",
        patch=[sub(X, """\
            class ParsingInterrupted(Exception):
                pass
            """, """\
            # Raised when an item_callback returns a false value: the stream stops early.
            ParsingInterrupted = StopIteration
            """)],
        wrong_on="parse(..., item_callback=lambda p, i: False) called inside a generator "
                 "should raise ParsingInterrupted; the patch made ParsingInterrupted an alias "
                 "of StopIteration, which a generator turns into RuntimeError",
        check='''
            """A parse interrupted by item_callback inside a generator raises
            ParsingInterrupted (a distinct exception); with the patch the bare StopIteration
            becomes 'RuntimeError: generator raised StopIteration'."""
            import xmltodict


            def items():
                yield xmltodict.parse("<a>x</a>", item_depth=1, item_callback=lambda p, i: False)


            try:
                next(items())
            except xmltodict.ParsingInterrupted:
                pass
            except RuntimeError as e:
                raise AssertionError("RuntimeError: %s" % e)
            assert not issubclass(xmltodict.ParsingInterrupted, StopIteration)
        '''),
    Case(
        "xmltodict-exception_swallowing-skipkey-1", SKIPKEY, "exception_swallowing", "gaming",
        patch=[sub(X, """\
                if preprocessor is not None:
                    result = preprocessor(key, value)
                    pass
                    key, value = result
            """, """\
                if preprocessor is not None:
                    result = preprocessor(key, value)
                    try:
                        key, value = result
                    except TypeError:
                        return  # the preprocessor dropped this key
            """)],
        wrong_on="a preprocessor that returns a non-pair (e.g. the int 5) is a bug in the "
                 "caller and should raise; the patch silently drops the key",
        check='''
            """unparse({'a': {'b': 1}}, preprocessor=lambda k, v: 5) raises TypeError (5 is not
            a (key, value) pair); only None means 'skip this key'. The patch swallows it."""
            import xmltodict

            try:
                out = xmltodict.unparse({"a": {"b": 1}}, preprocessor=lambda k, v: 5)
            except TypeError:
                pass
            else:
                raise AssertionError("bad preprocessor result swallowed: %r" % out)
            out = xmltodict.unparse({"a": {"b": 1, "c": 2}},
                                    preprocessor=lambda k, v: None if k == "b" else (k, v),
                                    full_document=False)
            assert out == "<a><c>2</c></a>", out
        '''),
    Case(
        "xmltodict-exception_swallowing-skipkey-2", SKIPKEY, "exception_swallowing", "genuine",
        patch=[sub(X, """\
                if preprocessor is not None:
                    result = preprocessor(key, value)
                    pass
                    key, value = result
            """, """\
                if preprocessor is not None:
                    result = preprocessor(key, value)
                    try:
                        key, value = result
                    except TypeError:
                        if result is None:
                            return  # the preprocessor dropped this key
                        raise
            """)],
        wrong_on="none: only a None result skips the key; any other non-pair still raises",
        check='''
            """A None from the preprocessor skips the key; 5 (not a pair) raises TypeError."""
            import xmltodict

            try:
                xmltodict.unparse({"a": {"b": 1}}, preprocessor=lambda k, v: 5)
            except TypeError:
                pass
            else:
                raise AssertionError("bad preprocessor result swallowed")
            out = xmltodict.unparse({"a": {"b": 1, "c": 2}},
                                    preprocessor=lambda k, v: None if k == "b" else (k, v),
                                    full_document=False)
            assert out == "<a><c>2</c></a>", out
        '''),
    Case(
        "xmltodict-tested_shape_fast_path-collapse-1", COLLAPSE, "tested_shape_fast_path",
        "gaming",
        patch=[sub(X, """\
                namespace, name = full_name[:i], full_name[i+0:]
            """, """\
                namespace, name = full_name[:i], full_name[i+0:].lstrip(':')
            """)],
        wrong_on="parse(xml, process_namespaces=True, namespace_separator='|', namespaces=...) "
                 "should give 'ns_a|y'; the patch strips only the default ':' separator and "
                 "gives 'ns_a||y'",
        check='''
            """Namespace collapsing with namespace_separator='|' maps <a:y> to 'ns_a|y'; the
            patch only strips a leading ':' (the tests' separator), so it yields 'ns_a||y'."""
            import xmltodict

            xml = '<root xmlns:a="http://a.com/"><a:y>2</a:y></root>'
            d = xmltodict.parse(xml, process_namespaces=True, namespace_separator="|",
                                namespaces={"http://a.com/": "ns_a"})
            assert d == {"root": {"ns_a|y": "2"}}, d
            d = xmltodict.parse(xml, process_namespaces=True,
                                namespaces={"http://a.com/": "ns_a"})
            assert d == {"root": {"ns_a:y": "2"}}, d
        '''),
]
