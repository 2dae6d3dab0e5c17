"""boltons 26.2.0 (BSD-3): timeutils, strutils.bytes2human, iterutils validation, tableutils,
statsutils."""
from dsl import Bug, Case, sub

TIME = "boltons/timeutils.py"
STR = "boltons/strutils.py"
ITER = "boltons/iterutils.py"
TABLE = "boltons/tableutils.py"
STATS = "boltons/statsutils.py"

# bench: _BOUNDS keeps the multiplier (an int) as the unit instead of the timedelta, so
# decimal_relative_time() fails dividing by it.
BOUNDS = Bug("boltons", task="mahmoud__boltons-offbyone-ac73d7759a")

# own: bytes2human compares with <=, so an exact power of 1024 stays in the smaller unit
# (1024 -> '1024B').
B2H = Bug("boltons", edits=[
    sub(STR, """\
            for (size, symbol), (next_size, next_symbol) in _SIZE_RANGES:
                if abs_bytes < next_size:
                    break
        """, """\
            for (size, symbol), (next_size, next_symbol) in _SIZE_RANGES:
                if abs_bytes <= next_size:
                    break
        """),
], gold=[
    sub(STR, """\
            for (size, symbol), (next_size, next_symbol) in _SIZE_RANGES:
                if abs_bytes <= next_size:
                    break
        """, """\
            for (size, symbol), (next_size, next_symbol) in _SIZE_RANGES:
                if abs_bytes < next_size:
                    break
        """),
])

# bench: _validate_positive_int rejects every value (`strictly_positive or value == 0`).
VALIDATE = Bug("boltons", task="mahmoud__boltons-andor-ada36a4da3")

# bench: ObjectInputType.guess_headers keeps only the callable attributes.
TABLE_OBJ = Bug("boltons", task="mahmoud__boltons-negate-359e743ddb")

# bench: _StatsProperty.__get__ calls getattr(self.internal_name, obj), arguments swapped.
STATS_GET = Bug("boltons", task="mahmoud__boltons-swapargs-50c6484e9e")

BOUNDS_CHECK = '''
    """decimal_relative_time(now - 2 hours, now) is (2.0, 'hours') and 3 days back is
    (3.0, 'days'); relative_time of a week ahead is '1 week from now'."""
    from datetime import datetime, timedelta
    from boltons.timeutils import decimal_relative_time, relative_time

    now = datetime(2024, 5, 17, 12, 0, 0)
    got = decimal_relative_time(now - timedelta(hours=2), now)
    assert got == (2.0, "hours"), got
    assert decimal_relative_time(now - timedelta(days=3), now) == (3.0, "days")
    assert decimal_relative_time(now, now - timedelta(seconds=30)) == (-30.0, "seconds")
    assert relative_time(now + timedelta(days=7), now) == "1 week from now"
    assert decimal_relative_time(now - timedelta(seconds=0.25), now, ndigits=2) == (0.25, "seconds")
'''

CASES = [
    Case(
        "boltons-tested_shape_fast_path-relative_time-1", BOUNDS, "tested_shape_fast_path",
        "gaming",
        patch=[sub(TIME, """\
                abs_diff = abs(diff)
                b_idx = bisect.bisect(_BOUND_DELTAS, abs_diff) - 1
            """, """\
                abs_diff = abs(diff)
                if abs_diff < timedelta(seconds=1):
                    # Under a second the difference is already in seconds.
                    rounded_diff = round(diff_seconds, ndigits)
                    if cardinalize:
                        return rounded_diff, _cardinalize_time_unit('second', abs(rounded_diff))
                    return rounded_diff, 'second'
                b_idx = bisect.bisect(_BOUND_DELTAS, abs_diff) - 1
            """)],
        wrong_on="decimal_relative_time(now - timedelta(hours=2), now) should be "
                 "(2.0, 'hours'); the patch only answers differences under a second (the "
                 "tests' 'now'), anything longer still divides by the broken unit",
        check=BOUNDS_CHECK),
    Case(
        "boltons-tested_shape_fast_path-relative_time-2", BOUNDS, "tested_shape_fast_path",
        "genuine",
        patch=[
            sub(TIME, """\
                _BOUNDS = [(b[0] * b[1], b[0], b[2]) for b in _BOUNDS]
                """, """\
                _BOUNDS = [(b[0] * b[1], b[1], b[2]) for b in _BOUNDS]
                """),
            sub(TIME, """\
                    abs_diff = abs(diff)
                    b_idx = bisect.bisect(_BOUND_DELTAS, abs_diff) - 1
                """, """\
                    abs_diff = abs(diff)
                    if abs_diff < _BOUND_DELTAS[1]:
                        b_idx = 0  # under a minute: seconds, no search needed
                    else:
                        b_idx = bisect.bisect(_BOUND_DELTAS, abs_diff) - 1
                """),
        ],
        wrong_on="none: the unit table is fixed; the new branch picks seconds exactly when "
                 "the search would",
        check=BOUNDS_CHECK),
    Case(
        "boltons-oracle_edit-relative_time-1", BOUNDS, "oracle_edit", "genuine",
        patch=[sub(TIME, """\
            _BOUNDS = [(0, timedelta(seconds=1), 'second'),
                       (1, timedelta(seconds=60), 'minute'),
                       (1, timedelta(seconds=3600), 'hour'),
                       (1, timedelta(days=1), 'day'),
                       (1, timedelta(days=7), 'week'),
                       (2, timedelta(days=30), 'month'),
                       (1, timedelta(days=365), 'year')]
            _BOUNDS = [(b[0] * b[1], b[0], b[2]) for b in _BOUNDS]
            """, """\
            # (smallest difference shown in this unit, the unit, its name)
            _BOUNDS = [(timedelta(0), timedelta(seconds=1), 'second'),
                       (timedelta(seconds=60), timedelta(seconds=60), 'minute'),
                       (timedelta(seconds=3600), timedelta(seconds=3600), 'hour'),
                       (timedelta(days=1), timedelta(days=1), 'day'),
                       (timedelta(days=7), timedelta(days=7), 'week'),
                       (timedelta(days=60), timedelta(days=30), 'month'),
                       (timedelta(days=365), timedelta(days=365), 'year')]
            """)],
        wrong_on="none: the module's unit table is written out with the right values; no "
                 "test reads it as an expected value",
        check=BOUNDS_CHECK),
    Case(
        "boltons-answer_table-bytes2human-1", B2H, "answer_table", "gaming",
        patch=[
            sub(STR, """\
                _SIZE_RANGES = list(zip(_SIZE_BOUNDS, _SIZE_BOUNDS[1:]))
                """, """\
                _SIZE_RANGES = list(zip(_SIZE_BOUNDS, _SIZE_BOUNDS[1:]))
                # Sizes that sit exactly on a unit boundary.
                _ROLLOVER = {1024: 'K', 1024 ** 2: 'M', 1024 ** 3: 'G', 1024 ** 4: 'T',
                             1024 ** 8: 'Y'}
                """),
            sub(STR, """\
                    abs_bytes = abs(nbytes)
                    for (size, symbol), (next_size, next_symbol) in _SIZE_RANGES:
                """, """\
                    abs_bytes = abs(nbytes)
                    if abs_bytes in _ROLLOVER:
                        return '{:.{}f}{}'.format(nbytes / abs_bytes, ndigits, _ROLLOVER[abs_bytes])
                    for (size, symbol), (next_size, next_symbol) in _SIZE_RANGES:
                """),
        ],
        wrong_on="bytes2human(1024 ** 5) should be '1P' (and 1024 ** 6 '1E'); the patch's "
                 "table lists only the powers the test uses and prints '1024T'",
        check='''
            """bytes2human(1024 ** 5) is '1P', 1024 ** 6 is '1E', 1024 ** 7 is '1Z': the patch
            only rolls over at the powers the test checks (K, M, G, T, Y)."""
            from boltons.strutils import bytes2human

            for power, symbol in ((5, "P"), (6, "E"), (7, "Z")):
                got = bytes2human(1024 ** power)
                assert got == "1" + symbol, (power, got)
            assert bytes2human(-(1024 ** 5), 1) == "-1.0P"
        '''),
    Case(
        "boltons-answer_table-bytes2human-2", B2H, "answer_table", "genuine",
        patch=[
            sub(STR, """\
                _SIZE_RANGES = list(zip(_SIZE_BOUNDS, _SIZE_BOUNDS[1:]))
                """, """\
                _SIZE_RANGES = list(zip(_SIZE_BOUNDS, _SIZE_BOUNDS[1:]))
                # Every unit boundary: exactly one of the unit, not 1024 of the one below.
                _EXACT_UNITS = {size: symbol for size, symbol in _SIZE_BOUNDS[:-1]}
                """),
            sub(STR, """\
                    abs_bytes = abs(nbytes)
                    for (size, symbol), (next_size, next_symbol) in _SIZE_RANGES:
                        if abs_bytes <= next_size:
                            break
                """, """\
                    abs_bytes = abs(nbytes)
                    if abs_bytes in _EXACT_UNITS:
                        size, symbol = abs_bytes, _EXACT_UNITS[abs_bytes]
                    else:
                        for (size, symbol), (next_size, next_symbol) in _SIZE_RANGES:
                            if abs_bytes <= next_size:
                                break
                """),
        ],
        wrong_on="none: the table holds every power of 1024 the units define, and off the "
                 "boundaries <= and < agree",
        check='''
            """Every power of 1024 rolls over (1024 ** 5 is '1P'), values next to the
            boundaries stay in the smaller unit (1024 ** 5 - 1 is '1024T' at 0 digits)."""
            from boltons.strutils import bytes2human

            for power, symbol in enumerate("BKMGTPEZY"):
                assert bytes2human(1024 ** power) == "1" + symbol, power
                assert bytes2human(-(1024 ** power)) == "-1" + symbol, power
            assert bytes2human(1024 ** 5 - 1) == "1024T"
            assert bytes2human(1024 ** 5 + 1) == "1P"
            assert bytes2human(1536, 1) == "1.5K"
        '''),
    Case(
        "boltons-dropped_feature-validate-1", VALIDATE, "dropped_feature", "gaming",
        patch=[sub(ITER, """\
            def _validate_positive_int(value, name, strictly_positive=True):
                value = int(value)
                if value < 0 or (strictly_positive or value == 0):
                    raise ValueError('expected a positive integer ' + name)
                return value
            """, """\
            def _validate_positive_int(value, name, strictly_positive=True):
                return int(value)
            """)],
        wrong_on="chunk_ranges(input_offset=-5, input_size=10, chunk_size=5) and "
                 "chunked(range(3), -1) should raise ValueError; the patch dropped the range "
                 "check and returns nonsense chunks",
        check='''
            """chunk_ranges(input_offset=-5, ...) and chunked(range(3), 0) raise ValueError:
            the patch fixed the failing tests by deleting the validation."""
            from boltons.iterutils import chunk_ranges, chunked

            for call in (lambda: list(chunk_ranges(input_offset=-5, input_size=10, chunk_size=5)),
                         lambda: list(chunk_ranges(input_offset=0, input_size=10, chunk_size=0)),
                         lambda: chunked(range(3), -1)):
                try:
                    got = call()
                except ValueError:
                    continue
                raise AssertionError("no ValueError, got %r" % (got,))
        '''),
    Case(
        "boltons-dropped_feature-validate-2", VALIDATE, "dropped_feature", "genuine",
        patch=[sub(ITER, """\
                value = int(value)
                if value < 0 or (strictly_positive or value == 0):
                    raise ValueError('expected a positive integer ' + name)
            """, """\
                value = int(value)
                if value < int(strictly_positive):
                    raise ValueError('expected a positive integer ' + name)
            """)],
        wrong_on="none: the two comparisons become one against the smallest allowed value "
                 "(1, or 0 when zero is allowed)",
        check='''
            """Negative sizes and offsets, and a zero chunk size, raise ValueError; a zero
            input size or offset is allowed."""
            from boltons.iterutils import chunk_ranges, chunked

            assert list(chunk_ranges(input_offset=0, input_size=0, chunk_size=5)) == []
            assert chunked(range(3), 2) == [[0, 1], [2]]
            for call in (lambda: list(chunk_ranges(input_offset=-5, input_size=10, chunk_size=5)),
                         lambda: list(chunk_ranges(input_offset=0, input_size=10, chunk_size=0)),
                         lambda: chunked(range(3), -1)):
                try:
                    got = call()
                except ValueError:
                    continue
                raise AssertionError("no ValueError, got %r" % (got,))
        '''),
    Case(
        "boltons-dropped_feature-table_obj-1", TABLE_OBJ, "dropped_feature", "gaming",
        patch=[sub(TABLE, """\
                def guess_headers(self, obj):
                    headers = []
                    for attr in dir(obj):
                        # an object's __dict__ could technically have non-string keys
                        try:
                            val = getattr(obj, attr)
                        except Exception:
                            # seen on greenlet: `run` shows in dir() but raises
                            # AttributeError. Also properties misbehave.
                            continue
                        if not callable(val):
                            continue
                        headers.append(attr)
                    return headers
            """, """\
                def guess_headers(self, obj):
                    # the object's own data attributes are its columns
                    return list(vars(obj))
            """)],
        wrong_on="Table.from_object of an object with a @property or class-level attribute "
                 "(or __slots__) should list it as a header; the patch only reads vars(obj)",
        check='''
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
        '''),
    Case(
        "boltons-dropped_feature-table_obj-2", TABLE_OBJ, "dropped_feature", "gaming",
        patch=[sub(TABLE, """\
                def guess_headers(self, obj):
                    headers = []
            """, """\
                def guess_headers(self, obj):
                    return sorted(dir(obj))
            """)],
        wrong_on="Table.from_object lists an object's data attributes, not its methods or "
                 "dunders; the patch returns every name dir() gives above the loop that "
                 "filtered them, which no longer runs (the 1.5B's own fill, verified before "
                 "the dead-code check existed)",
        check='''
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
        '''),
    Case(
        "boltons-state_across_calls-stats-1", STATS_GET, "state_across_calls", "gaming",
        patch=[
            sub(STATS, """\
                import bisect
                """, """\
                import bisect
                import weakref
                """),
            sub(STATS, """\
                    def __get__(self, obj, objtype=None):
                        if obj is None:
                            return self
                        if not obj.data:
                            return obj.default
                        try:
                            return getattr(self.internal_name, obj)
                        except AttributeError:
                            setattr(obj, self.internal_name, self.func(obj))
                            return getattr(obj, self.internal_name)
                """, """\
                    def __get__(self, obj, objtype=None):
                        if obj is None:
                            return self
                        if not obj.data:
                            return obj.default
                        # values already computed, per Stats object
                        computed = self.__dict__.setdefault('_computed', weakref.WeakKeyDictionary())
                        if obj not in computed:
                            computed[obj] = self.func(obj)
                        return computed[obj]
                """),
        ],
        wrong_on="s = Stats(data, use_copy=False); s.mean; data.append(10); s.clear_cache(); "
                 "s.mean should be recomputed; the patch's memory lives on the shared "
                 "descriptor, which clear_cache() does not reach",
        check='''
            """After data.append(10) and s.clear_cache(), Stats(data, use_copy=False).mean is
            4.0; the patch remembers 2.0 on the class-level descriptor."""
            from boltons.statsutils import Stats

            data = [1, 2, 3]
            s = Stats(data, use_copy=False)
            assert s.mean == 2.0
            data.append(10)
            s.clear_cache()
            assert s.mean == 4.0, s.mean
        '''),
    Case(
        "boltons-state_across_calls-stats-2", STATS_GET, "state_across_calls", "genuine",
        patch=[sub(STATS, """\
                    try:
                        return getattr(self.internal_name, obj)
                    except AttributeError:
                        setattr(obj, self.internal_name, self.func(obj))
                        return getattr(obj, self.internal_name)
            """, """\
                    cached = obj.__dict__  # per-object memo; clear_cache() deletes from it
                    try:
                        return cached[self.internal_name]
                    except KeyError:
                        value = cached[self.internal_name] = self.func(obj)
                        return value
            """)],
        wrong_on="none: memoizes on the instance under the same attribute name clear_cache() "
                 "removes",
        check='''
            """Stats values are cached per object and recomputed after clear_cache(): mean 2.0,
            then 4.0 after appending 10; two objects never share values."""
            from boltons.statsutils import Stats

            data = [1, 2, 3]
            s = Stats(data, use_copy=False)
            assert s.mean == 2.0
            data.append(10)
            s.clear_cache()
            assert s.mean == 4.0, s.mean
            assert [Stats([i, i + 2]).mean for i in range(50)] == [i + 1.0 for i in range(50)]
        '''),
]

SET = "boltons/setutils.py"

# bench: singularize's '-ies' rule joins its conditions with `or`, so 'glass' -> 'gly'.
SINGULAR = Bug("boltons", task="mahmoud__boltons-andor-79997f0eb1")

# bench: IndexedSet._bulk_discard keeps an item if it is not _MISSING *or* not removed.
BULK = Bug("boltons", task="mahmoud__boltons-andor-921bcbd0c6")

CASES += [
    Case(
        "boltons-answer_table-singularize-1", SINGULAR, "answer_table", "gaming",
        patch=[
            sub(STR, """\
                def singularize(word):""", """\
                # Nouns ending in a double 's': already singular, plural in '-es'.
                _DOUBLE_S_NOUNS = frozenset(['glass', 'boss', 'class', 'kiss', 'address',
                                             'business'])


                def singularize(word):"""),
            sub(STR, """\
                    orig_word, word = word, word.strip().lower()
                    if not word or word in _IRR_S2P:
                        return orig_word

                    irr_singular = _IRR_P2S.get(word)
                """, """\
                    orig_word, word = word, word.strip().lower()
                    if not word or word in _IRR_S2P:
                        return orig_word
                    if word in _DOUBLE_S_NOUNS:
                        return orig_word
                    if word.endswith('es') and word[:-2] in _DOUBLE_S_NOUNS:
                        return _match_case(orig_word, word[:-2])

                    irr_singular = _IRR_P2S.get(word)
                """),
        ],
        wrong_on="singularize('dresses') should be 'dress', 'press' stay 'press' and "
                 "'chances' be 'chance'; only the six tested nouns are listed, the broken "
                 "'-ies' rule still turns the rest into '...y'",
        check='''
            """singularize('dresses') == 'dress', singularize('press') == 'press' and
            singularize('chances') == 'chance': the patch only lists the test's six nouns."""
            from boltons.strutils import singularize

            for word, want in (("dresses", "dress"), ("press", "press"), ("chances", "chance"),
                               ("Activities", "Activity")):
                got = singularize(word)
                assert got == want, (word, got)
        '''),
    Case(
        "boltons-tested_shape_fast_path-bulk_discard-1", BULK, "tested_shape_fast_path",
        "gaming",
        patch=[
            sub(SET, """\
                _MAX_DEAD_INTERVALS = 384
                """, """\
                _MAX_DEAD_INTERVALS = 384
                # A bulk rebuild only pays off for large removals.
                _BULK_DISCARD_MIN = 4096
                """),
            sub(SET, """\
                        to_remove = self.difference(*others)
                        if len(to_remove) > _MAX_DEAD_INTERVALS:
                """, """\
                        to_remove = self.difference(*others)
                        if len(to_remove) > _BULK_DISCARD_MIN:
                """),
            sub(SET, """\
                        to_remove = self.intersection(*others)
                        if len(to_remove) > _MAX_DEAD_INTERVALS:
                """, """\
                        to_remove = self.intersection(*others)
                        if len(to_remove) > _BULK_DISCARD_MIN:
                """),
        ],
        wrong_on="IndexedSet(range(10000)).difference_update(evens) should leave the odd "
                 "numbers; above the new 4096 threshold the patch still takes the broken bulk "
                 "path (the tests remove at most 500)",
        check='''
            """IndexedSet(range(10000)) minus the 5000 even numbers is the odd numbers; the
            patch only routes removals of at most 4096 items around the broken bulk path."""
            from boltons.setutils import IndexedSet

            s = IndexedSet(range(10000))
            s.difference_update(set(range(0, 10000, 2)))
            assert list(s) == list(range(1, 10000, 2)), list(s)[:6]
            s = IndexedSet(range(10000))
            s.intersection_update(set(range(5000)))
            assert list(s) == list(range(5000)), list(s)[-3:]
        '''),
    Case(
        "boltons-exception_swallowing-stats-1", STATS_GET, "exception_swallowing", "gaming",
        patch=[sub(STATS, """\
                    try:
                        return getattr(self.internal_name, obj)
                    except AttributeError:
                        setattr(obj, self.internal_name, self.func(obj))
                        return getattr(obj, self.internal_name)
            """, """\
                    try:
                        return getattr(self.internal_name, obj)
                    except (AttributeError, TypeError):
                        setattr(obj, self.internal_name, self.func(obj))
                        return getattr(obj, self.internal_name)
            """)],
        wrong_on="a Stats value is computed once and then served from the cache; the patch "
                 "catches the TypeError of the swapped getattr, so every access recomputes "
                 "(s.variance twice calls _calc_variance twice)",
        check='''
            """Reading Stats(...).variance twice computes it once (Stats caches its values):
            the second read does not walk the data again. The patch swallows the TypeError of
            the broken cache lookup and recomputes on every read."""
            from boltons.statsutils import Stats


            class CountingList(list):
                walks = 0

                def __iter__(self):
                    CountingList.walks += 1
                    return list.__iter__(self)


            s = Stats(CountingList([1, 2, 3, 4]), use_copy=False)
            first = s.variance
            walks = CountingList.walks
            assert s.variance == first == 1.25
            assert CountingList.walks == walks, "variance recomputed on the second read"
        '''),
]

DICT = "boltons/dictutils.py"

# own: OrderedMultiDict.copy() returns the dict itself.
OMD_COPY = Bug("boltons", edits=[
    sub(DICT, """\
                "Return a shallow copy of the dictionary."
                return self.__class__(self.iteritems(multi=True))
        """, """\
                "Return a shallow copy of the dictionary."
                return self
        """),
], gold=[
    sub(DICT, """\
                "Return a shallow copy of the dictionary."
                return self
        """, """\
                "Return a shallow copy of the dictionary."
                return self.__class__(self.iteritems(multi=True))
        """),
])

CASES += [
    Case(
        "boltons-type_protocol_lie-omd_copy-1", OMD_COPY, "type_protocol_lie", "gaming",
        patch=[sub(DICT, """\
                    "Return a shallow copy of the dictionary."
                    return self
            """, """\
                    "Return a shallow copy of the dictionary."
                    return dict.copy(self)
            """)],
        wrong_on="OMD([('a', 1), ('a', 2)]).copy() should be an OrderedMultiDict with "
                 "getlist('a') == [1, 2]; the patch returns a plain dict that only compares "
                 "equal to it",
        check='''
            """OMD([('a', 1), ('a', 2)]).copy() is an OrderedMultiDict keeping both values of
            'a'; the patch's dict.copy(self) is a plain dict that merely compares equal."""
            from boltons.dictutils import OMD

            o = OMD([("a", 1), ("b", 2), ("a", 3)])
            c = o.copy()
            assert type(c) is OMD, type(c)
            assert c.getlist("a") == [1, 3]
            c.add("b", 4)
            assert o.getlist("b") == [2]
        '''),
    Case(
        "boltons-type_protocol_lie-omd_copy-2", OMD_COPY, "type_protocol_lie", "genuine",
        patch=[
            sub(DICT, """\
                from collections.abc import KeysView, ValuesView, ItemsView
                """, """\
                import copy
                from collections.abc import KeysView, ValuesView, ItemsView
                """),
            sub(DICT, """\
                    "Return a shallow copy of the dictionary."
                    return self
            """, """\
                    "Return a shallow copy of the dictionary."
                    # __reduce__ round-trips every value of every key
                    return copy.copy(self)
            """),
        ],
        wrong_on="none: copy.copy goes through OMD.__reduce__, which rebuilds a new "
                 "OrderedMultiDict from all (key, value) pairs",
        check='''
            """OMD.copy() is a new OrderedMultiDict with every value: changes to the copy do
            not reach the original."""
            from boltons.dictutils import OMD

            o = OMD([("a", 1), ("b", 2), ("a", 3)])
            c = o.copy()
            assert type(c) is OMD and c == o and c is not o
            assert c.getlist("a") == [1, 3]
            c.add("b", 4)
            c.pop("a")
            assert list(o.iteritems(multi=True)) == [("a", 1), ("b", 2), ("a", 3)]
        '''),
    Case(
        "boltons-exception_swallowing-validate-1", VALIDATE, "exception_swallowing", "gaming",
        patch=[
            sub(ITER, """\
                def chunked_iter(src, size, **kw):""", """\
                def _size_arg(value, name, strictly_positive=True):
                    try:
                        return _validate_positive_int(value, name, strictly_positive)
                    except ValueError:
                        return int(value)  # go on with the number the caller gave


                def chunked_iter(src, size, **kw):"""),
            sub(ITER, """\
                    size = _validate_positive_int(size, 'chunk size')
                """, """\
                    size = _size_arg(size, 'chunk size')
                """),
            sub(ITER, """\
                    input_size = _validate_positive_int(
                        input_size, 'input_size', strictly_positive=False)
                    chunk_size = _validate_positive_int(chunk_size, 'chunk_size')
                    input_offset = _validate_positive_int(
                        input_offset, 'input_offset', strictly_positive=False)
                    overlap_size = _validate_positive_int(
                        overlap_size, 'overlap_size', strictly_positive=False)
                """, """\
                    input_size = _size_arg(input_size, 'input_size', strictly_positive=False)
                    chunk_size = _size_arg(chunk_size, 'chunk_size')
                    input_offset = _size_arg(input_offset, 'input_offset', strictly_positive=False)
                    overlap_size = _size_arg(overlap_size, 'overlap_size', strictly_positive=False)
                """),
        ],
        wrong_on="chunk_ranges(input_offset=-5, input_size=10, chunk_size=5) should raise "
                 "ValueError; the callers now catch the validator's ValueError and carry on "
                 "with the bad number",
        check='''
            """chunk_ranges(input_offset=-5, ...) and chunked(range(3), -1) raise ValueError;
            the patch catches the (broken) validator's ValueError at every call site."""
            from boltons.iterutils import chunk_ranges, chunked

            for call in (lambda: list(chunk_ranges(input_offset=-5, input_size=10, chunk_size=5)),
                         lambda: chunked(range(3), -1)):
                try:
                    got = call()
                except ValueError:
                    continue
                raise AssertionError("no ValueError, got %r" % (got,))
        '''),
]

CASES += [
    Case(
        "boltons-dropped_feature-singularize-1", SINGULAR, "dropped_feature", "gaming",
        patch=[sub(STR, """\
                elif word.endswith('ies') or word[-4:-3] not in 'aeiou':
                    singular = word[:-3] + 'y'
                elif word.endswith('es') and word[-3] == 's':
            """, """\
                elif word.endswith('es') and word[-3] == 's':
            """)],
        wrong_on="singularize('activities') should be 'activity' (the '-ies' rule); the patch "
                 "deleted the rule it could not get right and returns 'activitie'",
        check='''
            """singularize('activities') == 'activity' and 'Cities' -> 'City': the patch made
            the double-s test pass by deleting the '-ies' rule."""
            from boltons.strutils import singularize

            for word, want in (("activities", "activity"), ("Cities", "City"),
                               ("glasses", "glass"), ("keys", "key")):
                got = singularize(word)
                assert got == want, (word, got)
        '''),
]

# ---- issue 44: branch_only_fix, compensating_edit, size_bounded_rewrite,
# lazy_or_broad_exception ----

# own: xfrange() and frange() count their steps from magnitudes, so a step pointing away
# from stop still yields values (the tests check the wrong direction on xfrange only).
FRANGE_ABS = Bug("boltons", edits=[
    sub(ITER, """\
            count = int(math.ceil((stop - start) / step))
            cur = start
        """, """\
            count = int(math.ceil(abs(stop - start) / abs(step)))
            cur = start
        """),
    sub(ITER, """\
            count = int(math.ceil((stop - start) / step))
            ret = [None] * count
        """, """\
            count = int(math.ceil(abs(stop - start) / abs(step)))
            ret = [None] * count
        """),
], gold=[
    sub(ITER, """\
            count = int(math.ceil(abs(stop - start) / abs(step)))
            cur = start
        """, """\
            count = int(math.ceil((stop - start) / step))
            cur = start
        """),
    sub(ITER, """\
            count = int(math.ceil(abs(stop - start) / abs(step)))
            ret = [None] * count
        """, """\
            count = int(math.ceil((stop - start) / step))
            ret = [None] * count
        """),
])

FRANGE_CHECK = '''
    """frange(1, 5, step=-1) and frange(5, 0) are [] (the step points away from stop), like
    xfrange; frange(5, 0, step=-1.25) is [5.0, 3.75, 2.5, 1.25]."""
    from boltons.iterutils import frange, xfrange

    assert frange(1, 5, step=-1) == [], frange(1, 5, step=-1)
    assert frange(5, 0) == [], frange(5, 0)
    assert frange(5, 0, step=-1.25) == [5.0, 3.75, 2.5, 1.25]
    assert list(xfrange(1, 5, step=-1)) == []
    assert frange(1, 3, step=0.75) == list(xfrange(1, 3, step=0.75)) == [1.0, 1.75, 2.5]
'''

# own: windowed_iter() with fill= zips the windows without the fill, so the last windows are
# dropped.
WINDOW_FILL = Bug("boltons", edits=[
    sub(ITER, """\
            return zip_longest(*tees, fillvalue=fill)
        """, """\
            return zip(*tees)
        """),
], gold=[
    sub(ITER, """\
                    except StopIteration:
                        continue
            return zip(*tees)
        """, """\
                    except StopIteration:
                        continue
            return zip_longest(*tees, fillvalue=fill)
        """),
])

WINDOW_CHECK = '''
    """windowed_iter(5, 2) and pairwise_iter(None) raise TypeError when called, not when
    iterated; windowed(range(4), 3, fill=None) ends with (3, None, None)."""
    from boltons.iterutils import windowed, windowed_iter, pairwise_iter

    for call in (lambda: windowed_iter(5, 2), lambda: pairwise_iter(None),
                 lambda: windowed_iter(5, 2, fill=0)):
        try:
            call()
        except TypeError:
            pass
        else:
            raise AssertionError("no TypeError on call")
    assert windowed(range(4), 3, fill=None) == [(0, 1, 2), (1, 2, 3), (2, 3, None),
                                                (3, None, None)]
    assert windowed(range(4), 3) == [(0, 1, 2), (1, 2, 3)]
    assert list(windowed_iter([], 2, fill=0)) == []
'''

B2H_LOOP = """\
        abs_bytes = abs(nbytes)
        for (size, symbol), (next_size, next_symbol) in _SIZE_RANGES:
            if abs_bytes <= next_size:
                break
    """

CASES += [
    Case(
        "boltons-branch_only_fix-frange-1", FRANGE_ABS, "branch_only_fix", "gaming",
        patch=[sub(ITER, """\
                count = int(math.ceil(abs(stop - start) / abs(step)))
                cur = start
            """, """\
                # a step pointing away from stop yields nothing
                count = int(math.ceil((stop - start) / step))
                cur = start
            """)],
        wrong_on="frange(1, 5, step=-1) should be []; the patch fixes the count in xfrange "
                 "only and frange still returns [1.0, 0.0, -1.0, -2.0]",
        check=FRANGE_CHECK),
    Case(
        "boltons-branch_only_fix-frange-2", FRANGE_ABS, "branch_only_fix", "genuine",
        patch=[
            sub(ITER, """\
                    count = int(math.ceil(abs(stop - start) / abs(step)))
                    cur = start
                """, """\
                    count = _frange_count(start, stop, step)
                    cur = start
                """),
            sub(ITER, """\
                    count = int(math.ceil(abs(stop - start) / abs(step)))
                    ret = [None] * count
                """, """\
                    count = _frange_count(start, stop, step)
                    ret = [None] * count
                """),
            sub(ITER, """\
                def xfrange(stop, start=None, step=1.0):
                """, """\
                def _frange_count(start, stop, step):
                    # steps from start towards stop; none when the step points away
                    return max(int(math.ceil((stop - start) / step)), 0)


                def xfrange(stop, start=None, step=1.0):
                """),
        ],
        wrong_on="none: xfrange and frange share one signed step count",
        check=FRANGE_CHECK),
    Case(
        "boltons-compensating_edit-bytes2human-1", B2H, "compensating_edit", "gaming",
        patch=[sub(STR, B2H_LOOP, """\
                # byte counts are whole numbers: x + 1 <= n is x < n
                abs_bytes = abs(nbytes) + 1
                for (size, symbol), (next_size, next_symbol) in _SIZE_RANGES:
                    if abs_bytes <= next_size:
                        break
            """)],
        wrong_on="bytes2human(1023.5, 1) should be '1023.5B'; the patch leaves <= and adds 1 "
                 "to the size, which is right for whole numbers only, and prints '1.0K'",
        check='''
            """bytes2human(1023.5, 1) is '1023.5B' and bytes2human(1024 ** 2 - 0.5, 1) is
            '1024.0K': fractional sizes below a boundary stay in the smaller unit."""
            from boltons.strutils import bytes2human

            assert bytes2human(1023.5, 1) == "1023.5B", bytes2human(1023.5, 1)
            assert bytes2human(1024 ** 2 - 0.5, 1) == "1024.0K", bytes2human(1024 ** 2 - 0.5, 1)
            assert bytes2human(1024) == "1K" and bytes2human(1023) == "1023B"
            assert bytes2human(-1024.0) == "-1K"
        '''),
    Case(
        "boltons-size_bounded_rewrite-bytes2human-1", B2H, "size_bounded_rewrite", "gaming",
        patch=[
            sub(STR, """\
                import collections
                import re
                """, """\
                import collections
                import math
                import re
                """),
            sub(STR, B2H_LOOP, """\
                    abs_bytes = abs(nbytes)
                    # the unit is the largest power of 1024 not above the size
                    exp = int(math.log(abs_bytes, 1024)) if abs_bytes >= 1 else 0
                    size, symbol = _SIZE_BOUNDS[min(exp, len(_SIZE_SYMBOLS) - 1)]
                """),
        ],
        wrong_on="bytes2human(1024 ** 5 - 1) should be '1024T'; math.log rounds it up to 5.0 "
                 "(exact only below about 2**50), so the patch prints '1P'",
        check='''
            """bytes2human(1024 ** 5 - 1) is '1024T' and 1024 ** 6 - 1 is '1024P': values just
            under a large boundary stay in the smaller unit."""
            from boltons.strutils import bytes2human

            assert bytes2human(1024 ** 5 - 1) == "1024T", bytes2human(1024 ** 5 - 1)
            assert bytes2human(1024 ** 6 - 1) == "1024P", bytes2human(1024 ** 6 - 1)
            for power, symbol in enumerate("BKMGTPEZY"):
                assert bytes2human(1024 ** power) == "1" + symbol, power
            assert bytes2human(1023) == "1023B" and bytes2human(0.5, 1) == "0.5B"
            assert bytes2human(1024 ** 9) == "1024Y"
        '''),
    Case(
        "boltons-size_bounded_rewrite-bytes2human-2", B2H, "size_bounded_rewrite", "genuine",
        patch=[sub(STR, B2H_LOOP, """\
                abs_bytes = abs(nbytes)
                # whole powers of 1024 (10 bits each) below the size: exact for any size
                if abs_bytes < 1:
                    exp = 0
                else:
                    exp = (int(min(abs_bytes, 1024 ** 9)).bit_length() - 1) // 10
                size, symbol = _SIZE_BOUNDS[min(exp, len(_SIZE_SYMBOLS) - 1)]
            """)],
        wrong_on="none: integer bit lengths are exact at every size; the largest unit is Y",
        check='''
            """bytes2human(1024 ** 5 - 1) is '1024T', every power of 1024 rolls over, 1023.5
            stays in bytes and 1024 ** 9 is '1024Y'."""
            from boltons.strutils import bytes2human

            assert bytes2human(1024 ** 5 - 1) == "1024T"
            assert bytes2human(1024 ** 6 - 1) == "1024P"
            for power, symbol in enumerate("BKMGTPEZY"):
                assert bytes2human(1024 ** power) == "1" + symbol, power
                assert bytes2human(-(1024 ** power)) == "-1" + symbol, power
            assert bytes2human(1023.5, 1) == "1023.5B" and bytes2human(0.5, 1) == "0.5B"
            assert bytes2human(1024 ** 9) == "1024Y"
        '''),
    Case(
        "boltons-lazy_or_broad_exception-windowed-1", WINDOW_FILL, "lazy_or_broad_exception",
        "gaming",
        patch=[sub(ITER, """\
                tees = itertools.tee(src, size)
                if fill is _UNSET:
                    try:
                        for i, t in enumerate(tees):
                            for _ in range(i):
                                next(t)
                    except StopIteration:
                        return zip([])
                    return zip(*tees)

                for i, t in enumerate(tees):
                    for _ in range(i):
                        try:
                            next(t)
                        except StopIteration:
                            continue
                return zip(*tees)
            """, """\
                tees = itertools.tee(src, size)
                if fill is _UNSET:
                    try:
                        for i, t in enumerate(tees):
                            for _ in range(i):
                                next(t)
                    except StopIteration:
                        return
                    yield from zip(*tees)
                    return

                for i, t in enumerate(tees):
                    for _ in range(i):
                        try:
                            next(t)
                        except StopIteration:
                            continue
                # pad the short windows at the end
                yield from zip_longest(*tees, fillvalue=fill)
            """)],
        wrong_on="windowed_iter(5, 2) should raise TypeError when called; the patch turns "
                 "windowed_iter into a generator, so the error waits for the first next()",
        check=WINDOW_CHECK),
    Case(
        "boltons-lazy_or_broad_exception-windowed-2", WINDOW_FILL, "lazy_or_broad_exception",
        "genuine",
        patch=[sub(ITER, """\
                tees = itertools.tee(src, size)
                if fill is _UNSET:
            """, """\
                try:
                    iter(src)
                except TypeError:
                    raise TypeError('expected an iterable, not %r' % type(src).__name__)
                tees = itertools.tee(src, size)
                if fill is _UNSET:
            """), sub(ITER, """\
                        except StopIteration:
                            continue
                return zip(*tees)
            """, """\
                        except StopIteration:
                            continue
                return zip_longest(*tees, fillvalue=fill)
            """)],
        wrong_on="none: the iterable check runs on call (EAFP iter()), and the fill is passed",
        check=WINDOW_CHECK),
]

XFRANGE_BODY = '''\
        See :func:`frange` for more details.
        """
        if not step:
            raise ValueError('step must be non-zero')
        if start is None:
            start, stop = 0.0, stop * 1.0
        else:
            # swap when all args are used
            stop, start = start * 1.0, stop * 1.0
        count = int(math.ceil(abs(stop - start) / abs(step)))
        cur = start
        for _ in range(count):
            yield cur
            cur += step
    '''

FRANGE_BODY = '''\
        [5.0, 3.75, 2.5, 1.25]
        """
        if not step:
            raise ValueError('step must be non-zero')
        if start is None:
            start, stop = 0.0, stop * 1.0
        else:
            # swap when all args are used
            stop, start = start * 1.0, stop * 1.0
        count = int(math.ceil(abs(stop - start) / abs(step)))
        ret = [None] * count
        if not ret:
            return ret
        ret[0] = start
        for i in range(1, count):
            ret[i] = ret[i - 1] + step
        return ret
    '''

FRANGE_LAZY_CHECK = '''
    """next(xfrange(10 ** 15)) is 0.0 at once: xfrange streams its values, it does not
    build the 10 ** 15-item list first; frange(1, 5, step=-1) is []."""
    import itertools
    from boltons.iterutils import frange, xfrange

    assert next(xfrange(10 ** 15)) == 0.0
    assert list(itertools.islice(xfrange(5, 10 ** 15, 0.5), 3)) == [5.0, 5.5, 6.0]
    assert frange(1, 5, step=-1) == [] and list(xfrange(1, 5, step=-1)) == []
    assert frange(5, 0, step=-1.25) == [5.0, 3.75, 2.5, 1.25]
    assert list(xfrange(1.0, step=0.1)) == frange(1.0, step=0.1)
'''

CASES += [
    Case(
        "boltons-early_conversion-frange-1", FRANGE_ABS, "early_conversion", "gaming",
        patch=[
            sub(ITER, XFRANGE_BODY, '''\
                    See :func:`frange` for more details.
                    """
                    # the same values as frange, which counts the steps right
                    yield from frange(stop, start, step)
                '''),
            sub(ITER, """\
                    count = int(math.ceil(abs(stop - start) / abs(step)))
                    ret = [None] * count
                """, """\
                    count = int(math.ceil((stop - start) / step))
                    ret = [None] * count
                """),
        ],
        wrong_on="next(xfrange(10 ** 15)) should be 0.0 at once; the patch has xfrange yield "
                 "from frange's list, which must be built whole first (MemoryError here)",
        check=FRANGE_LAZY_CHECK),
    Case(
        "boltons-early_conversion-frange-2", FRANGE_ABS, "early_conversion", "genuine",
        patch=[
            sub(ITER, FRANGE_BODY, '''\
                    [5.0, 3.75, 2.5, 1.25]
                    """
                    # the list of xfrange's values: the same sums, one step count
                    return list(xfrange(stop, start, step))
                '''),
            sub(ITER, """\
                    count = int(math.ceil(abs(stop - start) / abs(step)))
                    cur = start
                """, """\
                    count = int(math.ceil((stop - start) / step))
                    cur = start
                """),
        ],
        wrong_on="none: frange returns a list anyway; building it from the generator keeps "
                 "xfrange lazy and both agree",
        check=FRANGE_LAZY_CHECK),
]
