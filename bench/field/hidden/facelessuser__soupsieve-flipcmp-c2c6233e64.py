"""Hidden check: :in-range/:out-of-range treat a time input whose min is after its max as a wrap-around (overnight) range"""

import bs4
import soupsieve as sv


def _soup(markup):
    return bs4.BeautifulSoup(markup, "html.parser")


def test_overnight_range_in_range():
    soup = _soup(
        '<form>'
        '<input id="late" type="time" min="22:15" max="05:40" value="23:59">'
        '<input id="early" type="time" min="22:15" max="05:40" value="03:05">'
        '<input id="edge" type="time" min="22:15" max="05:40" value="05:40">'
        '<input id="midday" type="time" min="22:15" max="05:40" value="12:00">'
        '</form>'
    )
    ids = [el["id"] for el in sv.select("input:in-range", soup)]
    assert ids == ["late", "early", "edge"]


def test_overnight_range_out_of_range():
    soup = _soup(
        '<div>'
        '<input id="a" type="time" min="20:00" max="04:00" value="21:30">'
        '<input id="b" type="time" min="20:00" max="04:00" value="04:01">'
        '<input id="c" type="time" min="20:00" max="04:00" value="19:59">'
        '</div>'
    )
    assert [el["id"] for el in sv.select(":out-of-range", soup)] == ["b", "c"]
    assert sv.match(":in-range", soup.find(id="a"))
    assert not sv.match(":out-of-range", soup.find(id="a"))


def test_max_only_time_input():
    soup = _soup(
        '<input id="x" type="time" max="09:10" value="08:00">'
        '<input id="y" type="time" max="09:10" value="09:11">'
    )
    assert [el["id"] for el in sv.filter(":in-range", soup)] == ["x"]
    assert [el["id"] for el in sv.filter(":out-of-range", soup)] == ["y"]
