"""Hidden check: an iat claim given as a numeric string is compared as a number"""

import time

import jwt
import pytest
from jwt.exceptions import ImmatureSignatureError

KEY = "iat-check-secret-0123456789abcdef0123"


def _token(iat):
    return jwt.encode({"iat": iat, "sub": "x"}, KEY, algorithm="HS256")


def test_past_numeric_string_is_accepted():
    data = jwt.decode(_token("1500000000"), KEY, algorithms=["HS256"])
    assert data["iat"] == "1500000000"


def test_future_numeric_string_is_immature():
    future = str(int(time.time()) + 3600)
    with pytest.raises(ImmatureSignatureError):
        jwt.decode(_token(future), KEY, algorithms=["HS256"])


def test_leeway_applies_to_string_iat():
    soon = str(int(time.time()) + 30)
    data = jwt.decode(_token(soon), KEY, algorithms=["HS256"], leeway=120)
    assert data["iat"] == soon
