"""Hidden check: Bottle.uninstall removes exactly the plugins matching an instance, type or name"""

import bottle


def _suffix(text):
    def decorator(callback):
        def wrapper(*args, **kwargs):
            return callback(*args, **kwargs) + text
        return wrapper
    return decorator


class Tag(object):
    api = 2

    def __init__(self, name):
        self.name = name

    def apply(self, callback, route):
        return callback


def test_uninstall_instance_keeps_the_others():
    app = bottle.Bottle()
    before = list(app.plugins)
    first = app.install(_suffix("-1"))
    second = app.install(_suffix("-2"))
    assert app.uninstall(first) == [first]
    assert app.plugins == before + [second]

    @app.route("/x")
    def x():
        return "x"

    assert b"".join(app(
        {"REQUEST_METHOD": "GET", "PATH_INFO": "/x", "wsgi.input": None},
        lambda status, headers, exc_info=None: None,
    )) == b"x-2"


def test_uninstall_unknown_removes_nothing():
    app = bottle.Bottle()
    tag = app.install(Tag("alpha"))
    before = list(app.plugins)
    assert app.uninstall(Tag("alpha")) == []
    assert app.uninstall("nope") == []
    assert app.plugins == before
    assert tag in app.plugins


def test_uninstall_by_type_and_name():
    app = bottle.Bottle()
    default = list(app.plugins)
    a, b = app.install(Tag("a")), app.install(Tag("b"))
    deco = app.install(_suffix("!"))
    assert app.uninstall("b") == [b]
    assert app.plugins == default + [a, deco]
    assert app.uninstall(Tag) == [a]
    assert app.plugins == default + [deco]
