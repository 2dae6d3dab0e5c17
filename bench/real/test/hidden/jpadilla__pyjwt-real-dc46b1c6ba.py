"""Hidden check: a string issuer must match the iss claim exactly"""

import jwt
import pytest
from jwt.exceptions import InvalidIssuerError

KEY = "issuer-check-secret-0123456789abcdef"


def _decode(iss, issuer):
    token = jwt.encode({"iss": iss}, KEY, algorithm="HS256")
    return jwt.decode(token, KEY, algorithms=["HS256"], issuer=issuer)


@pytest.mark.parametrize("iss", ["https://auth", "example.com", "", "m"])
def test_substring_of_the_issuer_is_rejected(iss):
    with pytest.raises(InvalidIssuerError):
        _decode(iss, "https://auth.example.com")


def test_exact_and_listed_issuers_still_accepted():
    assert _decode("https://auth.example.com", "https://auth.example.com")["iss"] == "https://auth.example.com"
    assert _decode("b", ["a", "b"])["iss"] == "b"
    with pytest.raises(InvalidIssuerError):
        _decode("ab", "abc")
