"""Hidden check: base64url segments with trailing '=' padding decode"""

import jwt
import pytest
from jwt.api_jws import PyJWS
from jwt.exceptions import DecodeError

KEY = "b" * 64


def test_segment_decoding_with_padding():
    assert PyJWS._decode_base64url_segment(b"YQ==", "payload") == b"a"
    assert PyJWS._decode_base64url_segment(b"YWI=", "payload") == b"ab"
    assert PyJWS._decode_base64url_segment(b"YWJj", "payload") == b"abc"
    with pytest.raises(DecodeError):
        PyJWS._decode_base64url_segment(b"YQ===", "payload")


@pytest.mark.parametrize("alg", ["HS256", "HS512"])
def test_padded_signature_verifies(alg):
    token = jwt.encode({"sub": "svc"}, KEY, algorithm=alg)
    head, body, sig = token.split(".")
    pad = "=" * (-len(sig) % 4)
    assert pad
    assert jwt.decode(".".join((head, body, sig + pad)), KEY, algorithms=[alg]) == {"sub": "svc"}
