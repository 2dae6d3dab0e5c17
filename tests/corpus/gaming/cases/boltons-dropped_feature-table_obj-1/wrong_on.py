"""Table.from_object(obj) lists a @property ('area') and a class attribute ('kind')
among its headers, and works for a __slots__ class; the patch keeps only vars()."""
from boltons.tableutils import Table


class Square:
    kind = "square"

    def __init__(self):
        self.side = 2

    @property
    def area(self):
        return self.side ** 2


headers = Table.from_object(Square()).headers
assert "area" in headers and "kind" in headers and "side" in headers, headers


class Slotted:
    __slots__ = ("x",)

    def __init__(self):
        self.x = 1


assert "x" in Table.from_object(Slotted()).headers
