"""Hidden check: a domain that is exactly the root of a wildcard rule is itself a public suffix"""

from publicsuffixlist import PublicSuffixList

psl = PublicSuffixList()


def test_builtin_wildcard_roots_are_public():
    assert psl.publicsuffix("sch.uk") == "sch.uk"
    assert psl.publicsuffix("kawasaki.jp") == "kawasaki.jp"
    assert psl.is_public("nom.br")
    assert psl.privatesuffix("sch.uk") is None


def test_wildcard_root_keep_case_and_bytes():
    assert psl.publicsuffix("Sch.UK", keep_case=True) == "Sch.UK"
    assert psl.publicsuffix((b"nom", b"br")) == (b"nom", b"br")


def test_wildcard_only_tld_without_accept_unknown():
    assert psl.publicsuffix("kh", accept_unknown=False) == "kh"
    custom = PublicSuffixList(["// test list", "*.zz"], accept_unknown=False)
    assert custom.publicsuffix("zz") == "zz"
    assert custom.is_public("zz")
    assert custom.publicsuffix("shop.zz") == "shop.zz"
