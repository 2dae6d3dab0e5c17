"""Hidden check: format specs with precision"""

import parse


def test_precision():
    assert parse.parse("{:.2f}", "3.14")[0] == 3.14
    assert parse.parse("{:.1f} m", "0.5 m")[0] == 0.5


def test_width_without_precision():
    assert parse.parse("{:4d}", "  42")[0] == 42


def test_precision_of_two_digits():
    assert parse.parse("{:.10f}", "3.1415926536")[0] == 3.1415926536
