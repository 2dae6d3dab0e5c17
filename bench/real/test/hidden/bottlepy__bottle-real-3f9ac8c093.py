"""Hidden check: Route.get_undecorated_callback unwraps wraps(), methods and callables"""

import functools

import bottle


def _route(callback):
    return bottle.Route(bottle.Bottle(), "/p", "GET", callback)


def _plain_decorator(func):
    def inner(*a, **ka):
        return func(*a, **ka)
    return inner


def test_functools_wraps_chain():
    def target(x): return x

    @functools.wraps(target)
    def outer(*a):
        helper = len
        return helper(a) and target(*a)

    assert _route(outer).get_undecorated_callback() is target
    assert _route(functools.wraps(outer)(lambda: None)).get_undecorated_callback() is target


def test_callable_instance_in_closure_and_repr():
    class Handler:
        def __call__(self): return "ok"

    handler = Handler()
    route = _route(_plain_decorator(handler))
    assert route.get_undecorated_callback() is handler
    assert repr(route) == "<GET /p -> %s:__call__>" % __name__


def test_bound_method_wrapping_a_callable_object():
    class Impl:
        def __call__(self): return 2

    impl = Impl()

    def deco(obj):
        def method(self):
            return obj()
        return method

    class View:
        show = deco(impl)

    assert _route(View().show).get_undecorated_callback() is impl
