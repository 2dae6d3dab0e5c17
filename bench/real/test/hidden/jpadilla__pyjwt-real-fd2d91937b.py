"""Hidden check: a non-string iss claim or issuer argument is rejected cleanly"""

import jwt
import pytest
from jwt.exceptions import InvalidIssuerError

KEY = "iss-type-check-secret-0123456789abcdef"


def test_encode_rejects_non_string_iss():
    for iss in (7, ["issuer"], {"name": "x"}):
        with pytest.raises(TypeError):
            jwt.encode({"iss": iss}, KEY, algorithm="HS256")


def test_non_string_iss_in_token_is_invalid_issuer():
    body = b'{"iss": ["a"]}'
    token = jwt.api_jws.encode(body, KEY, algorithm="HS256")
    with pytest.raises(InvalidIssuerError):
        jwt.decode(token, KEY, algorithms=["HS256"], issuer={"a", "b"})


def test_issuer_argument_that_is_not_a_container():
    token = jwt.encode({"iss": "a"}, KEY, algorithm="HS256")
    with pytest.raises(InvalidIssuerError):
        jwt.decode(token, KEY, algorithms=["HS256"], issuer=5)
    assert jwt.decode(token, KEY, algorithms=["HS256"], issuer=("a",))["iss"] == "a"
