"""Hidden check: CSI sequences with a '$' intermediate are skipped, not drawn"""

import pyte
from pyte import control as ctrl


def test_decrqm_like_sequence_is_not_drawn():
    screen = pyte.Screen(10, 2)
    stream = pyte.Stream(screen)
    stream.feed('ab' + ctrl.CSI + '5$pcd')
    assert screen.display[0] == 'abcd      '


def test_rectangle_sequence_is_not_drawn():
    screen = pyte.Screen(10, 2)
    stream = pyte.Stream(screen)
    stream.feed(ctrl.CSI + '1;1;2;2$zXY')
    assert screen.display[0] == 'XY        '


def test_stream_state_after_skip():
    screen = pyte.Screen(6, 2)
    stream = pyte.ByteStream(screen)
    stream.feed(b'\x1b[2$x' + b'q\x1b[2;1Hw')
    assert screen.display == ['q     ', 'w     ']
