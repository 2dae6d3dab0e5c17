"""Hidden check: set_margins(0) (CSI r with a zero/omitted top) resets the margins"""

import pyte
from pyte import control as ctrl


def test_set_margins_zero_after_margins():
    screen = pyte.Screen(10, 5)
    screen.set_margins(2, 4)
    assert screen.margins == (1, 3)
    screen.set_margins(0)
    assert screen.margins is None


def test_stream_csi_r_variants_reset():
    screen = pyte.Screen(10, 5)
    stream = pyte.Stream(screen)
    stream.feed(ctrl.CSI + '2;4r')
    assert screen.margins == (1, 3)
    stream.feed(ctrl.CSI + 'r')
    assert screen.margins is None
    stream.feed(ctrl.CSI + '3;5r')
    stream.feed(ctrl.CSI + '0r')
    assert screen.margins is None


def test_reset_margins_scroll_whole_screen():
    screen = pyte.Screen(3, 4)
    stream = pyte.Stream(screen)
    stream.feed(ctrl.CSI + '2;3r')
    stream.feed(ctrl.CSI + 'r')
    stream.feed(ctrl.CSI + 'H' + 'a\r\nb\r\nc\r\nd\r\ne')
    assert screen.display == ['b  ', 'c  ', 'd  ', 'e  ']
