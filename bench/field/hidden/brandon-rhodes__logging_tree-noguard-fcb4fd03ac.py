"""Hidden check: a plain logging.Filter is described by its name, on loggers and on handlers, while other filters use repr"""

import logging

from logging_tree.format import build_description


def _node(logger):
    # A hand-built node tuple keeps the check independent of global logging state.
    return (logger.name, logger, [])


def test_logger_filter_shows_name():
    logger = logging.Logger('inventory.sync', logging.ERROR)
    logger.addFilter(logging.Filter('inventory.sync.remote'))
    lines = build_description(_node(logger)).splitlines()
    assert "   Filter name='inventory.sync.remote'" in lines
    assert not any('logging.Filter object' in line for line in lines)


def test_unnamed_filter_on_handler():
    logger = logging.Logger('billing', logging.INFO)
    handler = logging.NullHandler()
    handler.addFilter(logging.Filter())
    logger.addHandler(handler)
    lines = build_description(_node(logger)).splitlines()
    assert "     Filter name=''" in lines


def test_plain_and_custom_filters_side_by_side():
    class Quiet(logging.Filter):
        def __repr__(self):
            return '<Quiet>'

    logger = logging.Logger('api.v2', logging.WARNING)
    logger.addFilter(Quiet('api'))
    logger.addFilter(logging.Filter('api.v2.auth'))
    text = build_description(_node(logger))
    assert "   Filter <Quiet>\n   Filter name='api.v2.auth'\n" in text
