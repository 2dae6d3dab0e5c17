"""Hidden check: the Luhn checksum doubles every second digit from the right (including the first one) for decimal and mod-N alphabets"""

from stdnum import imei, luhn


def test_well_known_card_numbers_are_valid():
    for number in ('4111111111111111', '5500005555555559',
                   '378282246310005', '6011111111111117', '79927398713'):
        assert luhn.checksum(number) == 0
        assert luhn.is_valid(number)
        assert luhn.validate(number) == number


def test_check_digit_and_single_digit_changes():
    assert luhn.calc_check_digit('7992739871') == '3'
    assert luhn.calc_check_digit('411111111111111') == '1'
    assert luhn.calc_check_digit('12') == '5'
    assert luhn.checksum('17') == 9
    # altering the second-to-last digit must break validity
    assert not luhn.is_valid('79927398723')
    assert not luhn.is_valid('4111111111111121')


def test_mod_n_alphabets():
    hexa = '0123456789abcdef'
    assert luhn.checksum('1f', alphabet=hexa) == 1
    assert luhn.calc_check_digit('1f', alphabet=hexa) == '0'
    assert luhn.is_valid('1f0', alphabet=hexa)
    assert not luhn.is_valid('1fd', alphabet=hexa)
    alnum = '0123456789abcdefghijklmnopqrstuvwxyz'
    assert luhn.calc_check_digit('a1b2', alphabet=alnum) == '9'
    assert luhn.is_valid('a1b29', alphabet=alnum)
    assert luhn.checksum('zz', alphabet=alnum) == 34


def test_imei_check_digit():
    assert imei.format('49015420323751', add_check_digit=True) == '49-015420-323751-8'
    assert imei.is_valid('490154203237518')
    assert imei.is_valid('35-209900-176148-1')
    assert not imei.is_valid('490154203237519')
