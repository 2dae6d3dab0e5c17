"""Hidden check: deeply nested payloads raise DecodeError, not RecursionError"""

import jwt
import pytest
from jwt.exceptions import DecodeError

KEY = "recursion-secret-0123456789abcdef012345"


def _token(body):
    return jwt.api_jws.encode(body, KEY, algorithm="HS256")


def test_nested_arrays():
    token = _token(b"[" * 200000 + b"]" * 200000)
    with pytest.raises(DecodeError):
        jwt.decode(token, KEY, algorithms=["HS256"])


def test_nested_objects_without_verification():
    body = b'{"a":' * 200000 + b"1" + b"}" * 200000
    with pytest.raises(DecodeError):
        jwt.decode(_token(body), options={"verify_signature": False})
