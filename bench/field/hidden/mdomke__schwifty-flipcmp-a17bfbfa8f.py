"""Hidden check: German method 91 variant 3 may weight all ten account digits (positions 1-10) without failing"""

import pytest

from schwifty import BBAN, IBAN
from schwifty.checksum import algorithms
from schwifty.exceptions import InvalidBBANChecksum


def test_accounts_valid_only_under_variant_3_or_4():
    algo = algorithms["DE:91"]
    # valid only with the 10-digit weighting of variant 3
    assert algo.validate(["2465058629"], "") is True
    assert algo.validate(["4129516530"], "") is True
    # valid only under variant 4, which is tried after variant 3
    assert algo.validate(["3423720279"], "") is True
    assert algo.validate(["6946905675"], "") is True


def test_account_matching_no_variant_is_rejected():
    algo = algorithms["DE:91"]
    assert algo.validate(["6970309701"], "") is False
    assert algo.validate(["7480918169"], "") is False


def test_bban_of_method_91_bank():
    # PSD Bank Nord (20090900) uses check method 91
    assert BBAN("DE", "200909004574740224").validate_national_checksum() is True
    with pytest.raises(InvalidBBANChecksum):
        BBAN("DE", "200909002787324501").validate_national_checksum()


def test_iban_validate_bban_with_method_91():
    iban = IBAN.generate("DE", bank_code="20090900", account_code="8925784862")
    assert iban.validate(validate_bban=True) is True
