"""Hidden check: dispatch_on falls back to implementations registered for ancestor types"""

from decorator import dispatch_on


class Shape(object):
    pass


class Polygon(Shape):
    pass


class Square(Polygon):
    pass


def test_single_dispatch_uses_nearest_ancestor():
    @dispatch_on("shape")
    def describe(shape, tag=""):
        return "default" + tag

    @describe.register(Shape)
    def describe_shape(shape, tag=""):
        return "shape" + tag

    @describe.register(Polygon)
    def describe_polygon(shape, tag=""):
        return "polygon" + tag

    assert describe(Square(), tag="!") == "polygon!"
    assert describe(Polygon()) == "polygon"
    assert describe(3) == "default"


def test_double_dispatch_on_subclasses():
    @dispatch_on("left", "right")
    def collide(left, right):
        return None

    @collide.register(Shape, Polygon)
    def collide_shape_polygon(left, right):
        return (type(left).__name__, type(right).__name__)

    assert collide(Square(), Square()) == ("Square", "Square")
    assert collide(Polygon(), Square()) == ("Polygon", "Square")
    assert collide(Square(), Shape()) is None


def test_builtin_subclass_dispatch():
    class MyInt(int):
        pass

    @dispatch_on("value")
    def kind(value):
        return "other"

    @kind.register(int)
    def kind_int(value):
        return "int:%d" % value

    assert kind(MyInt(7)) == "int:7"
    assert kind(True) == "int:1"
    assert kind("x") == "other"
