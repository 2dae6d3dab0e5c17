"""Hidden check: Table.from_object takes non-callable attributes as headers"""

from boltons.tableutils import Table


class Point:
    def __init__(self):
        self.x = 1
        self.y = "b"
        self.tags = ["t"]

    def norm(self):
        return 0


def test_headers_skip_methods():
    headers = Table.from_object(Point()).headers
    assert "x" in headers and "y" in headers
    assert "norm" not in headers and "__init__" not in headers


def test_headers_keep_non_callable_objects():
    # A list is no method: it is a header like any other non-callable value.
    assert "tags" in Table.from_object(Point()).headers
