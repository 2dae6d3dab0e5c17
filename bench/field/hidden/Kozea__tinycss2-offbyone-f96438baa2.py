"""Hidden check: the label of a leading @charset "..."; rule picks the stylesheet's encoding"""

import tinycss2
from tinycss2.bytes import decode_stylesheet_bytes
from webencodings import lookup


def test_decode_with_charset_label():
    css = '@charset "windows-1251"; p::before { content: "Привет" }'.encode("cp1251")
    text, encoding = decode_stylesheet_bytes(css)
    assert encoding.name == "windows-1251"
    assert text == '@charset "windows-1251"; p::before { content: "Привет" }'


def test_charset_beats_environment_encoding():
    css = '@charset "koi8-r";a{content:"ж"}'.encode("koi8_r")
    text, encoding = decode_stylesheet_bytes(
        css, environment_encoding=lookup("latin1"))
    assert encoding.name == "koi8-r"
    assert text.endswith('content:"ж"}')


def test_utf16_label_means_utf8_and_parse_bytes():
    text, encoding = decode_stylesheet_bytes('@charset "utf-16be";b{}'.encode())
    assert encoding.name == "utf-8"
    rules, encoding = tinycss2.parse_stylesheet_bytes(
        '@charset "iso-8859-7";q{content:"Ω"}'.encode("iso-8859-7"), skip_whitespace=True)
    assert encoding.name == "iso-8859-7"
    assert rules[-1].content[-1].value == "Ω"
