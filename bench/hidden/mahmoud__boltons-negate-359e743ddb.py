"""Hidden check: Table.from_object takes non-callable attributes as headers"""

from boltons.tableutils import Table


class Point:
    def __init__(self):
        self.x = 1
        self.y = "b"

    def norm(self):
        return 0


def test_headers_skip_methods():
    headers = Table.from_object(Point()).headers
    assert "x" in headers and "y" in headers
    assert "norm" not in headers and "__init__" not in headers
