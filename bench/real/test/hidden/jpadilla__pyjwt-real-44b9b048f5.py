"""Hidden check: exp/nbf/iat of a wrong JSON type raise PyJWT errors, not TypeError"""

import jwt
import pytest
from jwt.exceptions import DecodeError, InvalidIssuedAtError, PyJWTError

KEY = "time-claim-secret-0123456789abcdef0123"


def _token(body):
    return jwt.api_jws.encode(body.encode(), KEY, algorithm="HS256")


@pytest.mark.parametrize("claim", ['"exp": [1]', '"nbf": {"t": 1}', '"exp": null', '"nbf": [ ]'])
def test_exp_and_nbf_of_wrong_type(claim):
    with pytest.raises(DecodeError):
        jwt.decode(_token("{" + claim + "}"), KEY, algorithms=["HS256"])


def test_iat_of_wrong_type():
    for value in ("null", "[0]", '{"x": 0}'):
        with pytest.raises(InvalidIssuedAtError):
            jwt.decode(_token('{"iat": %s}' % value), KEY, algorithms=["HS256"])


def test_huge_float_exp_is_a_pyjwt_error():
    with pytest.raises(PyJWTError):
        jwt.decode(_token('{"exp": 1e999}'), KEY, algorithms=["HS256"])
