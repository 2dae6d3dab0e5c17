"""Hidden check: a Stream keeps working after a handler raised"""

import pytest

import pyte
from pyte import control as ctrl


class Boom(Exception):
    pass


def boom(*args, **kwargs):
    raise Boom()


def test_csi_after_failed_csi_handler():
    screen = pyte.Screen(10, 2)
    screen.cursor_position = boom
    stream = pyte.Stream(screen)
    with pytest.raises(Boom):
        stream.feed(ctrl.CSI + '2;3H')
    stream.feed('hi' + ctrl.CSI + '1m' + 'z')
    assert screen.display[0] == 'hiz       '
    assert screen.buffer[0][2].bold


def test_each_failure_raises_the_handler_error():
    screen = pyte.Screen(10, 2)
    screen.cursor_position = boom
    stream = pyte.Stream(screen)
    for _ in range(3):
        with pytest.raises(Boom):
            stream.feed(ctrl.CSI + 'H')


def test_byte_stream_after_failed_c0_handler():
    screen = pyte.Screen(10, 2)
    screen.bell = boom
    stream = pyte.ByteStream(screen)
    with pytest.raises(Boom):
        stream.feed(b'\x07')
    stream.feed(b'ab\r\ncd')
    assert screen.display == ['ab        ', 'cd        ']
