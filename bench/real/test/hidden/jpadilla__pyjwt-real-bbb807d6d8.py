"""Hidden check: encoding with a PyJWK and no algorithm uses the key's algorithm"""

import jwt
from jwt import PyJWK

OCT = {"kty": "oct", "k": "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODkwMTIz", "alg": "HS512"}


def test_jwt_encode_uses_hs512_from_the_jwk():
    key = PyJWK(OCT)
    token = jwt.encode({"n": 1}, key)
    assert jwt.get_unverified_header(token)["alg"] == "HS512"
    assert jwt.decode(token, key, algorithms=["HS512"]) == {"n": 1}


def test_jws_encode_uses_the_jwk_algorithm():
    key = PyJWK({**OCT, "alg": "HS384"})
    token = jwt.api_jws.encode(b"payload", key)
    assert jwt.get_unverified_header(token)["alg"] == "HS384"


def test_explicit_algorithm_and_plain_keys_unchanged():
    key = PyJWK(OCT)
    assert jwt.get_unverified_header(jwt.encode({}, key, algorithm="HS512"))["alg"] == "HS512"
    plain = jwt.encode({}, "x" * 40)
    assert jwt.get_unverified_header(plain)["alg"] == "HS256"
    assert jwt.get_unverified_header(jwt.encode({}, key))["alg"] == "HS512"
