"""Hidden check: HistoryScreen keeps its scrollback on ED 0/1/2 and drops it only on ED 3"""

import pyte


def _screen_with_history():
    screen = pyte.HistoryScreen(4, 3, history=10)
    stream = pyte.Stream(screen)
    stream.feed("\r\n".join("L%d" % i for i in range(7)))
    return screen, stream


def test_clear_screen_keeps_scrollback():
    screen, stream = _screen_with_history()
    top_before = ["".join(line[x].data for x in range(4)) for line in screen.history.top]
    assert top_before == ["L0  ", "L1  ", "L2  ", "L3  "]
    for seq in ("\x1b[J", "\x1b[1J", "\x1b[2J"):
        stream.feed(seq)
        assert len(screen.history.top) == 4
    assert screen.history.position == screen.history.size == 10
    assert screen.display == ["    ", "    ", "    "]


def test_erase_saved_lines_clears_scrollback():
    screen, stream = _screen_with_history()
    stream.feed("\x1b[3J")
    assert len(screen.history.top) == 0
    assert len(screen.history.bottom) == 0
    assert screen.history.position == 10


def test_scrolling_back_after_clear_screen():
    screen, stream = _screen_with_history()
    stream.feed("\x1b[2J")
    screen.prev_page()
    assert screen.display == ["L2  ", "L3  ", "    "]
    assert len(screen.history.bottom) == 2
