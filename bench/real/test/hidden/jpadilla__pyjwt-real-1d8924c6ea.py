"""Hidden check: an OKP JWK whose x does not belong to its d is rejected"""

import json

import pytest
from cryptography.hazmat.primitives.asymmetric.ed448 import Ed448PrivateKey
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from jwt.algorithms import OKPAlgorithm
from jwt.exceptions import InvalidKeyError


def _jwk(key):
    return OKPAlgorithm.to_jwk(key, as_dict=True)


@pytest.mark.parametrize("cls", [Ed25519PrivateKey, Ed448PrivateKey])
def test_x_of_another_key(cls):
    one, other = _jwk(cls.generate()), _jwk(cls.generate())
    mixed = dict(one, x=other["x"])
    with pytest.raises(InvalidKeyError):
        OKPAlgorithm.from_jwk(mixed)
    with pytest.raises(InvalidKeyError):
        OKPAlgorithm.from_jwk(json.dumps(mixed))


def test_consistent_key_still_loads_and_signs():
    priv = Ed25519PrivateKey.generate()
    jwk = _jwk(priv)
    loaded = OKPAlgorithm.from_jwk(jwk)
    alg = OKPAlgorithm()
    sig = alg.sign(b"msg", loaded)
    assert alg.verify(b"msg", priv.public_key(), sig)
    with pytest.raises(InvalidKeyError):
        OKPAlgorithm.from_jwk(dict(jwk, x=_jwk(Ed25519PrivateKey.generate())["x"]))
