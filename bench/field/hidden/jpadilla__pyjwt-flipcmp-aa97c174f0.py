"""Hidden check: jwt.encode accepts a payload without an iss claim and rejects a non-string iss"""

import pytest

import jwt

KEY = "k" * 64


def test_payload_without_issuer_encodes():
    token = jwt.encode({"sub": "alice", "n": 7}, KEY, algorithm="HS256")
    assert token == (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
        ".eyJzdWIiOiJhbGljZSIsIm4iOjd9"
        ".DQfydeP0dwoHET6N4fXzZi-OGyMo5qdC8pnn4L22c2M"
    )
    assert jwt.decode(token, KEY, algorithms=["HS256"]) == {"sub": "alice", "n": 7}


def test_payload_without_issuer_through_pyjwt_instance():
    token = jwt.PyJWT().encode({"aud": "svc", "exp": 4102444800}, KEY, algorithm="HS384")
    assert token == (
        "eyJhbGciOiJIUzM4NCIsInR5cCI6IkpXVCJ9"
        ".eyJhdWQiOiJzdmMiLCJleHAiOjQxMDI0NDQ4MDB9"
        ".76xq_SwMZ1G2NTMtL58R5StxU14tXX4eldtSZzTPjAZc4dVzhP0Fpv4zeiatrNR8"
    )


@pytest.mark.parametrize("issuer", [None, ["a", "b"], b"issuer", 1.5])
def test_non_string_issuer_is_rejected(issuer):
    with pytest.raises(TypeError, match="Issuer"):
        jwt.encode({"iss": issuer, "sub": "x"}, KEY, algorithm="HS256")


def test_string_issuer_is_kept():
    token = jwt.encode({"iss": "https://issuer.example"}, KEY, algorithm="HS256")
    assert jwt.decode(token, KEY, algorithms=["HS256"]) == {"iss": "https://issuer.example"}
