"""Hidden check: a cachedmethod read through its class warns of nothing"""

import operator
import unittest.mock
import warnings

from cachetools import LRUCache, cachedmethod


class Service:
    def __init__(self):
        self.cache = LRUCache(4)

    @cachedmethod(operator.attrgetter("cache"))
    def get(self, key):
        return key * 2


def test_class_access_and_autospec_without_warnings():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Service.get
        mock = unittest.mock.create_autospec(Service, instance=True)
    assert caught == []
    mock.get(3)
    mock.get.assert_called_once_with(3)


def test_instances_still_cache():
    s = Service()
    assert (s.get(2), s.get(2)) == (4, 4)
    assert len(s.cache) == 1
