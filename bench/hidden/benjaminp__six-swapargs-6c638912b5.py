"""Hidden check: six.moves.getcwdb is os.getcwdb"""

import os

import six


def test_getcwdb():
    assert six.moves.getcwdb() == os.getcwdb()
    assert isinstance(six.moves.getcwdb(), bytes)
