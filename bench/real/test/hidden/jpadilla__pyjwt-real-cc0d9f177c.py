"""Hidden check: malformed JWK Set members are skipped as unusable keys"""

import pytest
from jwt import PyJWK, PyJWKSet
from jwt.exceptions import InvalidKeyError, PyJWKSetError

GOOD = {"kty": "oct", "k": "c2VjcmV0LWtleS0wMTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NQ", "kid": "good"}


def test_non_object_members_skipped():
    jwks = PyJWKSet.from_dict({"keys": [None, "text", 3, ["x"], GOOD]})
    assert [k.key_id for k in jwks.keys] == ["good"]


def test_only_bad_members_is_a_set_error():
    with pytest.raises(PyJWKSetError):
        PyJWKSet.from_dict({"keys": ["a", 1]})
    with pytest.raises(PyJWKSetError):
        PyJWKSet.from_dict({"keys": [{"kty": "oct", "k": 12}]})


def test_wrong_component_type_is_invalid_key():
    with pytest.raises(InvalidKeyError):
        PyJWK({"kty": "oct", "k": ["not", "a", "string"]})
    jwks = PyJWKSet.from_dict({"keys": [{"kty": "oct", "k": 5, "kid": "bad"}, GOOD]})
    assert jwks["good"].key_id == "good"
