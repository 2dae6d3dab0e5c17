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
