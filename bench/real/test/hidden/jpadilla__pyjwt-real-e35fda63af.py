"""Hidden check: the crit header is validated when decoding"""

import jwt
import pytest
from jwt.exceptions import InvalidTokenError

KEY = "crit-check-secret-0123456789abcdef01234"


def _token(headers):
    return jwt.api_jws.encode(b'{"a":1}', KEY, algorithm="HS256", headers=headers)


@pytest.mark.parametrize(
    "headers",
    [
        {"crit": ["x-custom"], "x-custom": 1},
        {"crit": []},
        {"crit": "b64"},
        {"crit": [1]},
        {"crit": ["b64"]},
    ],
)
def test_bad_crit_rejected_by_decode(headers):
    with pytest.raises(InvalidTokenError):
        jwt.api_jws.decode(_token(headers), KEY, algorithms=["HS256"])


def test_unverified_header_rejects_unknown_extension():
    token = _token({"crit": ["exp-ext"], "exp-ext": True})
    with pytest.raises(InvalidTokenError):
        jwt.get_unverified_header(token)
    with pytest.raises(InvalidTokenError):
        jwt.decode(token, KEY, algorithms=["HS256"])
