"""Hidden check: parse_uri reads the issuer parameter, a SHA256 algorithm, digits and period,
and rejects an issuer parameter that contradicts the label's"""

import hashlib

import pytest

import pyotp


def test_parameters_are_read():
    otp = pyotp.parse_uri(
        "otpauth://totp/Acme:ann@example.org?secret=JBSWY3DPEHPK3PXP"
        "&issuer=Acme&algorithm=SHA256&digits=8&period=45")
    assert isinstance(otp, pyotp.TOTP)
    assert otp.issuer == "Acme" and otp.name == "ann@example.org"
    assert otp.digest is hashlib.sha256
    assert otp.digits == 8 and otp.interval == 45


def test_issuer_parameter_without_label_issuer():
    otp = pyotp.parse_uri("otpauth://hotp/bob?secret=JBSWY3DPEHPK3PXP&issuer=Corp&counter=3")
    assert isinstance(otp, pyotp.HOTP)
    assert otp.issuer == "Corp" and otp.initial_count == 3


def test_contradicting_issuers_are_rejected():
    with pytest.raises(ValueError, match="issuer"):
        pyotp.parse_uri("otpauth://totp/Acme:ann?secret=JBSWY3DPEHPK3PXP&issuer=Other")
