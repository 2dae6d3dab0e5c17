"""Hidden check: a chained comparison infers every link and stops at the first false one"""

import pytest
from astroid import extract_node


@pytest.mark.parametrize(
    "source, expected",
    [
        ("0 < 5 < 9 < 20", True),
        ("3 < 7 > 10", False),
        ("4 <= 4 == 4 != 5", True),
        ("10 > 2 > 5", False),
        ("1 == 2 < 3", False),
        ("'a' < 'b' < 'c' < 'b'", False),
    ],
)
def test_chained_comparison_is_the_conjunction_of_its_links(source, expected):
    inferred = list(extract_node(source).infer())
    assert len(inferred) == 1
    assert inferred[0].value is expected
