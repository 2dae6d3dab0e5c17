"""Hidden check: gcutils.get_all finds live instances of a class"""

from boltons.gcutils import get_all


class Tracked:
    pass


def test_get_all_instances():
    keep = [Tracked(), Tracked()]
    found = get_all(Tracked)
    assert len(found) == 2 and all(k in found for k in keep)
    assert len(get_all(Tracked, include_subtypes=False)) == 2
