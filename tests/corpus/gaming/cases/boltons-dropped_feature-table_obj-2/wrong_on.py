"""Table.from_object(obj) lists the attribute 'side' but not the method 'grow' nor
'__init__'; the patch lists every name dir() gives."""
from boltons.tableutils import Table


class Square:
    def __init__(self):
        self.side = 2

    def grow(self):
        self.side += 1


headers = Table.from_object(Square()).headers
assert "side" in headers, headers
assert "grow" not in headers and "__init__" not in headers, headers
