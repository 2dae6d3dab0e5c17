"""Hidden check: BEGIN TRANSACTION / WORK / IMMEDIATE start no block when splitting"""

import sqlparse


def test_lowercase_begin_transaction():
    assert sqlparse.split('begin transaction;\nupdate t set a = 1;\ncommit;') == [
        'begin transaction;', 'update t set a = 1;', 'commit;']


def test_begin_end_work():
    assert sqlparse.split('BEGIN WORK;\nINSERT INTO t VALUES (1);\nEND WORK;\nSELECT 1;') == [
        'BEGIN WORK;', 'INSERT INTO t VALUES (1);', 'END WORK;', 'SELECT 1;']


def test_sqlite_begin_modes_on_one_line():
    assert sqlparse.split('BEGIN IMMEDIATE; SELECT 1; COMMIT;') == [
        'BEGIN IMMEDIATE;', 'SELECT 1;', 'COMMIT;']
    assert sqlparse.split('BEGIN EXCLUSIVE;\nDELETE FROM t;\nCOMMIT;') == [
        'BEGIN EXCLUSIVE;', 'DELETE FROM t;', 'COMMIT;']
