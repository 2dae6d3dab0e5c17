"""six.moves.getcwdb is os.getcwdb, and six.moves.getcwd os.getcwd."""
import os
import six

assert six.moves.getcwdb is os.getcwdb
assert six.moves.getcwd is os.getcwd
assert isinstance(six.moves.getcwdb(), bytes)
