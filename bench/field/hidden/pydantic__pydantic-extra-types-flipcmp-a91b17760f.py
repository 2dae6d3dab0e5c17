"""Hidden check: card numbers whose first four digits are exactly 2200 (lower edge of the Mir range) are identified as Mir and length-checked"""

import pytest
from pydantic import BaseModel, ValidationError

from pydantic_extra_types.payment import PaymentCardBrand, PaymentCardNumber


def _luhn_complete(partial: str) -> str:
    """Append the Luhn check digit to ``partial``."""
    for check in '0123456789':
        candidate = partial + check
        total = 0
        for pos, ch in enumerate(reversed(candidate)):
            d = int(ch)
            if pos % 2 == 1:
                d *= 2
                if d > 9:
                    d -= 9
            total += d
        if total % 10 == 0:
            return candidate
    raise AssertionError('unreachable')


class Card(BaseModel):
    number: PaymentCardNumber


def test_prefix_2200_cards_are_mir_through_model():
    for body in ('220012345678901', '2200987654321098', '22005555444433332'):
        number = _luhn_complete(body)
        card = Card(number=number).number
        assert card.brand == PaymentCardBrand.mir
        assert str(card.brand) == 'Mir'
        assert card.bin == number[:6]


def test_prefix_2200_card_direct_construction_and_mask():
    number = _luhn_complete('220031415926535')
    card = PaymentCardNumber(number)
    assert card.brand is PaymentCardBrand.mir
    assert card.masked == number[:6] + '******' + number[-4:]


def test_prefix_2200_with_wrong_length_is_rejected():
    # Mir cards must be 16-19 digits; a 15-digit 2200 number is invalid
    number = _luhn_complete('22007777888899')
    assert len(number) == 15
    with pytest.raises(ValidationError):
        Card(number=number)


def test_neighbouring_mir_prefixes_still_mir():
    for prefix in ('2201', '2204'):
        number = _luhn_complete(prefix + '123456789012')
        assert PaymentCardNumber(number).brand == PaymentCardBrand.mir
