

# --- differ: differential neighbourhood testing (src/verify/differential.rs drives it) ------
#
# Input: {"workspace", "paths", "args", "env", "ids", "tests", "sample", "functions": [{"file",
# "qualname", "bound", "pre_source"}], "examples", "per_fn_s", "per_call_s", "deadline_s"}, run
# in the PATCHED workspace. One process:
# 1. the failing tests and up to `sample` other tests of `tests` (their files, nearest first)
#    run under pytest with a profile hook that keeps deep copies of the arguments of every call
#    of a changed function (at most MAX_SEEN distinct calls each; a built-in iterator over a
#    sequence, `iter([1, 2])`, with its items, read from a copy; a generator's are unknown;
#    an object no copy can be made of, such as one holding a lock, kept as the test left it);
# 2. each changed function's pre-patch version is rebuilt from `pre_source` (the file before
#    the patch, executed as a scratch module): its code with the live module's globals, its
#    defaults mapped to the live module's objects (a sentinel stays the same object), so the two
#    versions differ only in the function's own code;
# 3. Hypothesis draws inputs shaped like the recorded ones — each argument from the values seen
#    at its place, widened: other and larger numbers, other text, longer and empty containers,
#    a tuple for a list, a counting iterator for a sequence (finite or endless), a value of
#    another type for a container, a mapping whose lookups raise ProbeError — besides the
#    recorded calls themselves and each grown a thousandfold (ints times 1000, sequences
#    repeated, also as iterators); both versions answer each input, every call in a forked
#    child killed after `per_call_s` (a timeout is tried again with three times the time),
#    all within `per_fn_s`; the two versions' children for one input run together, and a
#    call of plain values (or of a drawn stand-in's recipe) asked again reuses its answer;
# 4. a finding is an input where the patched version
#      crashes   raises where the original answered, by the interpreter inside the changed
#                code (not a `raise` of the project's code: validation a fix adds is
#                deliberate; not in a callback; not a value of another type rejected; not
#                memory or a C range on call; not on one of the module's own constants, a
#                sentinel passed as itself), or runs out of time or recursion depth;
#      reads_whole_input  pulls every item of a finite iterator argument for the answer the
#                original gave after pulling fewer, and still every item when each iterator
#                is twice as long (a fix that needs one item more stops early there);
#      raises_later  returns a lazy iterator where the original raised on call, and raises
#                the same error only when it is read;
#      swallows_input_error  answers where the original let an argument's own error
#                (ProbeError) through;
#      mutates_input  changes an argument in place that the original left as it was (on the
#                tests' own calls, and its text never stores into that parameter);
#      loses_precision  on a test's call with a whole number (or its digits) moved past a
#                float's 53 bits (10 ** 18 added, keeping sign and last digits), answers four
#                neighbours alike that the original told apart, while it tells the same four
#                apart without the 10 ** 18 and answers some numbers further up differently
#                (not a cap a fix set): the number went through a float;
#    Hypothesis shrinks each to its smallest input; one that does not replay is not counted.
#    Outputs that differ are counted, with the smallest such input: not a finding alone (the
#    original is the buggy code, a fix changes outputs).
# Output per function: {"fn", "examples", "differ", "differ_call", "differ_before",
# "differ_after", "findings": [{"kind", "call", "before", "after"}], "note"}.

MAX_SEEN = 24


class _Found(Exception):
    """A finding on the current input (Hypothesis shrinks it)."""


class IterSpec:
    """An iterator argument to make afresh for each call: over `items`, or endless (None)."""

    def __init__(self, items):
        self.items = items

    def __repr__(self):
        if self.items is None:
            return "iter(count())"
        return "iter(%s)" % canon(list(self.items))


class Odd:
    """A value of another type than any seen at its place (None for a container, a number for
    text): the original may reject it as the patched code does."""

    def __init__(self, v):
        self.v = v

    def __repr__(self):
        return canon(self.v)


class ProbeError(RuntimeError):
    """Raised by a faulty argument: an error no code under test knows by name."""


class Faulty:
    """A mapping argument whose lookups raise ProbeError (made afresh for each call)."""

    def __init__(self, d):
        self.d = d

    def __repr__(self):
        return "faulty(%s)" % canon(self.d)


def _faulty_dict(d):
    class FaultyDict(dict):
        def __getitem__(self, k):
            raise ProbeError("lookup of %r" % (k,))

        def get(self, k, default=None):
            raise ProbeError("lookup of %r" % (k,))

    return FaultyDict(d)


def _scaled(v, depth=0):
    """A recorded value grown: ints a thousand times larger, sequences and iterators repeated
    to a thousand times their length (at most 10000 items)."""
    if depth > 3:
        return v
    if type(v) is int and v != 0:
        return v * 1000
    if type(v) in (list, tuple) and v:
        n = max(1, min(1000, 10000 // len(v)))
        return type(v)(list(v) * n)
    if isinstance(v, IterSpec) and v.items:
        items = list(v.items)
        return IterSpec(items * max(1, min(1000, 10000 // len(items))))
    return v


class CountingIter:
    """An iterator that counts the items pulled from it."""

    def __init__(self, spec):
        import itertools

        self.total = None if spec.items is None else len(spec.items)
        self.src = itertools.count() if spec.items is None else iter(list(spec.items))
        self.pulled = 0

    def __iter__(self):
        return self

    def __next__(self):
        v = next(self.src)
        self.pulled += 1
        return v


# Containers that are a recorded argument, or one converted (a tuple or an iterator of it) or
# grown: a crash on them is a crash on the tests' own data. Containers Hypothesis put together
# from recorded pieces may be malformed (an AST node with one child where the code takes two):
# a crash there is not counted. Kept alive so their ids stay theirs.
_NEAR = {}


def near(v):
    _NEAR[id(v)] = v
    return v


def _made(values):
    """Whether an argument is a container put together by the generator (not near)."""
    for v in values:
        if (type(v) in (list, tuple, dict, set, frozenset) or isinstance(v, IterSpec)) and \
                id(v) not in _NEAR:
            return True
    return False


def _text_near(s):
    """A tested text's neighbours: its cases, doubled, a character more or fewer at either
    end (an 'x' added, the first dropped; then the last dropped, the first or last repeated:
    these three only in the agreements' neighbours, so the draw stays what it was)."""
    return [s.upper(), s.lower(), s.capitalize(), s + s, s[1:], "x" + s, s + "x",
            s[:-1], s[:1] + s, s + s[-1:]]


DRAWN_TEXT_NEAR = 7


def _near_values(v):
    """A tested value's neighbours: a text's (`_text_near`); a number negated, one more and
    one less, zero; nothing for other values."""
    if type(v) is str:
        return _text_near(v)
    if type(v) in (int, float):
        return [-v, v + 1, v - 1, v * 0]
    return []


def _shape_strategy(values, depth=0):
    """A strategy for one argument from the values seen there: the values themselves (copied
    afresh), and values of the same kinds widened beyond them."""
    from hypothesis import strategies as st
    seen = [v for v in values if not isinstance(v, IterSpec)]
    alts = []
    kinds = {type(v) for v in seen}
    ints = [v for v in seen if type(v) is int]
    if ints:
        lo, hi = min(ints), max(ints)
        alts += [st.integers(lo - 3, hi + 3), st.integers(),
                 st.integers(-(2 ** 70), 2 ** 70), st.integers(1000, 5000),
                 st.sampled_from([10 ** 6, 10 ** 9, 10 ** 15, 2 ** 63, -(10 ** 9)])]
    if float in kinds:
        alts += [st.floats(allow_nan=False, allow_infinity=False),
                 st.integers(-(10 ** 6), 10 ** 6).map(float), st.floats(-1e3, 1e3),
                 st.sampled_from([1e-9, -1e-9, 1e15, 0.5, 2.5])]
    if bool in kinds:
        alts.append(st.booleans())
    strs = [v for v in seen if type(v) is str]
    if strs:
        alphabet = sorted(set("".join(strs)) | set("abcXYZ019 -_."))
        longest = max(len(x) for x in strs)
        alts += [st.text(alphabet=alphabet, max_size=longest * 2 + 4),
                 st.sampled_from(strs).flatmap(
                     lambda s: st.sampled_from(_text_near(s)[:DRAWN_TEXT_NEAR]))]
    if bytes in kinds:
        alts.append(st.binary(max_size=16))
    if type(None) in kinds:
        alts.append(st.none())
    if depth < 3:
        seqs = [v for v in seen if type(v) in (list, tuple)]
        iters = [v for v in values if isinstance(v, IterSpec)]
        if seqs or iters:
            items = [x for v in seqs for x in v][:200] + [
                x for v in iters if v.items is not None for x in v.items][:200]
            elem = _shape_strategy(items, depth + 1) if items else st.integers(-5, 5)
            longest = max([len(v) for v in seqs] + [len(v.items) for v in iters
                                                    if v.items is not None] + [0])
            lists = st.lists(elem, max_size=min(longest * 2 + 4, 40))
            alts += [lists, lists.map(tuple), lists.map(IterSpec),
                     st.integers(0, 3000).map(lambda n: IterSpec(range(n))),
                     st.integers(0, 3000).map(lambda n: list(range(n))),
                     st.just(IterSpec(None)), st.sampled_from([None, 0, 7]).map(Odd)]
        sets = [v for v in seen if type(v) in (set, frozenset)]
        if sets:
            items = [x for v in sets for x in v][:200]
            elem = _shape_strategy(items, depth + 1) if items else st.integers(-5, 5)
            alts.append(st.sets(elem, max_size=20).map(type(sets[0])))
        dicts = [v for v in seen if type(v) is dict]
        if dicts:
            keys = [k for d in dicts for k in d][:200]
            vals = [x for d in dicts for x in d.values()][:200]
            kst = _shape_strategy(keys, depth + 1) if keys else st.text(max_size=4)
            vst = _shape_strategy(vals, depth + 1) if vals else st.integers()
            alts.append(st.dictionaries(kst, vst, max_size=20))
            if depth == 0:
                alts.append(st.sampled_from(dicts).map(Faulty))
    # What is seen, as it was (objects, callables, sentinels): always one of the choices.
    if values:
        alts.insert(0, st.sampled_from([near(v) for v in values]))
        if depth == 0:
            seqs = [v for v in values if type(v) in (list, tuple) and v]
            if seqs:
                alts += [st.sampled_from(seqs).map(lambda v: near(tuple(v))),
                         st.sampled_from(seqs).map(lambda v: near(list(v))),
                         st.sampled_from(seqs).map(lambda v: near(IterSpec(list(v))))]
    # Hashable elements only where a set or dict key needs them: filtered at use.
    return st.one_of(alts) if alts else st.nothing()


def _fresh(v, keep, depth=0):
    """A copy of a drawn value for one call: iterator specs become new counting iterators,
    everything else deep-copied except the objects in `keep` (module-level names: a sentinel
    must stay the same object)."""
    import copy

    if isinstance(v, IterSpec):
        return CountingIter(v)
    if isinstance(v, Odd):
        return v.v
    if isinstance(v, Faulty):
        return _faulty_dict(_fresh(v.d, keep, depth + 1))
    if type(v) in (list, tuple) and depth < 4:
        return type(v)(_fresh(x, keep, depth + 1) for x in v)
    memo = dict(keep)
    try:
        return copy.deepcopy(v, memo)
    except BaseException:  # noqa: B036
        return v


def _iters(args, kw):
    return [x for x in list(args) + list(kw.values()) if isinstance(x, CountingIter)]


def _raised_in(tb, filename):
    """Whether the innermost frame of the workspace's code is in `filename` (the changed
    function's file): a crash of the code the patch changed, not of a callback or a test
    helper it called."""
    root = os.path.realpath(ws) + os.sep
    last = None
    while tb is not None:
        fn = tb.tb_frame.f_code.co_filename
        if os.path.realpath(fn).startswith(root):
            last = fn
        tb = tb.tb_next
    return last == filename


def _deliberate(tb):
    """An exception raised by a `raise` statement of the workspace's own code (a check a fix
    may add), not by the interpreter or a library."""
    import linecache

    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    if last is None:
        return False
    fn = os.path.realpath(last.tb_frame.f_code.co_filename)
    if not fn.startswith(os.path.realpath(ws) + os.sep):
        return False
    line = linecache.getline(last.tb_frame.f_code.co_filename, last.tb_lineno).strip()
    return line.startswith("raise")


ITERATOR_REPR = re.compile(r"<[\w.]*(?:iterator|CountingIter|generator)[\w. ]* at 0x…>")
# Memory a call may add to the process's address space (its child, see `_run`).
CALL_MEMORY = 512 << 20


def _facts(args, kw):
    """What a drawn input is, for judging both versions' answers: the length of each iterator
    argument (None: endless), whether one is endless, whether a value of another type is in it."""
    given = list(args) + list(kw.values())
    specs = [x for x in given if isinstance(x, IterSpec)]
    return {"total": [None if s.items is None else len(s.items) for s in specs],
            "endless": any(s.items is None for s in specs),
            "odd": any(isinstance(x, Odd) for x in given)}


def _call(fn, head, args, kw, keep, post=None):
    """One call on fresh copies, in this process: {"how": "ret" | "lazy" | "raise", "text",
    "error", "deliberate", "inside", "lazy_error", "pulled": [...], "total": [...], "odd",
    "endless"}. `post` maps the answer (an iterator's items read) before it is shown."""
    import hashlib
    import itertools

    h = [_fresh(x, keep) for x in head]
    a = [_fresh(x, keep) for x in args]
    k = {n: _fresh(x, keep) for n, x in kw.items()}
    its = _iters(a, k)
    out = _facts(args, kw)
    given = list(a) + list(k.values())

    def texts():
        # Iterators are consumed by design; only other arguments count as changed.
        return [None if isinstance(x, CountingIter) else _safe_canon(x) for x in given]
    before_texts = texts()
    try:
        r = fn(*h, *a, **k)
        out["pulled"] = [it.pulled for it in its]
        if hasattr(r, "__next__") and not isinstance(r, (str, bytes, dict)):
            out["how"] = "lazy"
            try:
                r = list(itertools.islice(r, 200))
            except BaseException as e:  # noqa: B036
                out.update(lazy_error=type(e).__name__,
                           deliberate=_deliberate(e.__traceback__),
                           inside=isinstance(e, RecursionError) or _raised_in(
                               e.__traceback__, fn.__code__.co_filename),
                           list_changed=_list_changed(e))
                r = None
        else:
            out["how"] = "ret"
            if READ_NESTED:
                r = _read_nested(r)
        if post is not None and (r is not None or out["how"] == "ret"):
            r = post(r)
        # An iterator inside the answer is compared as one (the counting wrapper or a
        # list's iterator: the items it still holds are not the answer's).
        out["text"] = ""
        if r is not None or out["how"] == "ret":
            whole = ITERATOR_REPR.sub("<iterator>", ADDRESS.sub(" at 0x…", canon(r)))
            out["text"] = whole[:ANSWER_CHARS]
            # Of the whole answer: two long answers that begin alike are not the same answer.
            out["digest"] = hashlib.sha1(whole.encode("utf-8", "replace")).hexdigest()
    except RecursionError:
        out.update(how="raise", error="RecursionError", deliberate=False, inside=True)
    except BaseException as e:  # noqa: B036  behaviour too
        out.update(how="raise", error=type(e).__name__,
                   deliberate=_deliberate(e.__traceback__),
                   inside=_raised_in(e.__traceback__, fn.__code__.co_filename),
                   list_changed=_list_changed(e))
    out.setdefault("pulled", [it.pulled for it in its])
    after_texts = texts()
    out["mutated"] = [x is not None and x != y for x, y in zip(before_texts, after_texts)]
    return out


LIST_CHANGED = re.compile(
    r"'\w+' object (has no attribute '(append|extend|insert|remove|pop|sort|reverse|clear)'"
    r"|does not support item (assignment|deletion))")


def _list_changed(e):
    """Whether `e` is the error of changing a value in place as a list is changed (appending,
    assigning an item) where the value is no list: what code that extends the list it was
    given does with a tuple or an iterator."""
    return isinstance(e, (AttributeError, TypeError)) and bool(LIST_CHANGED.match(str(e)))


def _spent():
    """CPU seconds of this process and its reaped children (every call's child is reaped
    before its answer is read): what a time box counts, so that a loaded machine (a CI
    runner's parallel jobs) slows the layer down without changing what it asks."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


# A hang's guard beside the CPU boxes: the wall clock's end for the whole layer (`differ`).
WALL_END = [float("inf")]


def _over(until):
    """Whether a box that ends at `until` (CPU seconds, `_spent`) is spent, or the wall
    clock's end is reached."""
    import time
    return _spent() > until or time.monotonic() > WALL_END[0]


# The tested values' neighbours the crash checks ask (before the draw) at most.
NEAR_CHECKS = 150

# Characters of an answer's text that are compared (a longer one is cut).
ANSWER_CHARS = 300

# Whether an answer's iterators inside a tuple or list are read, and its whole floats read as
# ints (consensus compares what candidates return: a pair (peeked, rest) differs only in what
# `rest` yields; 7.0 == 7 in any test).
READ_NESTED = False


class _Read:
    """An iterator inside an answer, read: its first items, or the error reading raised."""

    def __init__(self, items, error):
        self.items, self.error = items, error

    def __repr__(self):
        return "iter(%s%s)" % (canon(self.items), ", then raises %s" % self.error
                               if self.error else "")


def _read_nested(v, depth=0):
    import itertools

    if hasattr(v, "__next__") and not isinstance(v, (str, bytes, dict)):
        items = []
        try:
            for x in itertools.islice(v, 200):
                items.append(x)
        except BaseException as e:  # noqa: B036
            return _Read(items, type(e).__name__)
        return _Read(items, None)
    if depth < 2 and type(v) in (tuple, list):
        return type(v)(_read_nested(x, depth + 1) for x in v)
    if type(v) is float and v.is_integer() and abs(v) < 2 ** 53:
        return int(v)  # 7.0 answers what 7 does (`==` is what tests compare with)
    return v


def _safe_canon(x):
    try:
        return ADDRESS.sub(" at 0x…", canon(x, 0))[:2000]
    except BaseException:  # noqa: B036
        return None


# Answers already given in this function's checks: (fn, post, the call's plain key) -> the
# child's JSON. The same call is asked again and again (the drawn inputs by every agreement,
# the tested calls by each check, shrinking's replays), and each fork costs ~5 ms in a process
# that holds pytest and the project. Cleared per changed function (`_memo_reset`): the keys
# hold ids of the functions and the tested call's head, alive until then.
_MEMO = {}
# Calls answered, and the children forked for them (the rest were answered before).
ASKED = {"asked": 0, "forked": 0}
PLAIN = (type(None), bool, int, float, complex, str, bytes)


def _memo_reset():
    _MEMO.clear()


def _plain_key(v, depth=0):
    """A key that tells apart every two plain values a call could tell apart (type, value,
    order), or None for anything else (an object, an iterator, a drawn odd value)."""
    t = type(v)
    if t in PLAIN or t is range:
        return (t.__name__, repr(v))
    if depth > 4:
        return None
    # The drawn stand-ins made afresh for each call (`_fresh`): their recipe is their key.
    if t is IterSpec:
        inner = "endless" if v.items is None else _plain_key(v.items, depth + 1)
        return None if inner is None else ("IterSpec", inner)
    if t in (Odd, Faulty):
        inner = _plain_key(v.v if t is Odd else v.d, depth + 1)
        return None if inner is None else (t.__name__, inner)
    if t in (list, tuple, set, frozenset):
        items = [_plain_key(x, depth + 1) for x in v]
        return None if None in items else (t.__name__, tuple(items))
    if t is dict:
        items = [(_plain_key(a, depth + 1), _plain_key(b, depth + 1)) for a, b in v.items()]
        return None if any(None in i for i in items) else ("dict", tuple(items))
    return None


def _same_value(x, y):
    """Whether two argument values are the same value (same plain key, or the same object)."""
    if x is y:
        return True
    try:
        kx = _plain_key(x)
        return kx is not None and kx == _plain_key(y)
    except (ValueError, RecursionError):  # an int too long for repr, say
        return False


def _memo_key(fn, head, args, kw, post):
    try:
        a = _plain_key(tuple(args))
        k = _plain_key(dict(kw))
    except (ValueError, RecursionError):  # an int too long for repr, say
        return None
    if a is None or k is None:
        return None
    # The head (a bound call's self or class) is the recorded object itself, kept alive in
    # the function's recorded calls: its identity is its key.
    return (id(fn), id(post), tuple(id(h) for h in head), a, k)


def _run(fn, head, args, kw, keep, per_call, setup=None, post=None):
    """`_call` in a forked child, killed after `per_call` seconds: a loop in C that no signal
    interrupts, memory beyond CALL_MEMORY, or state the call leaves in a module cannot reach
    the next call (a fork costs ~2 ms). `setup` runs in the child first (a candidate's code
    swapped in: the parent never changes). A call of plain values already answered is not
    asked again (`_MEMO`), unless that answer was a death or memory (an edge, asked anew)."""
    return _runs([(fn, head, args, kw, per_call, setup, post)], keep)[0]


def _runs(jobs, keep):
    """`_run` of each job `(fn, head, args, kw, per_call, setup, post)`, the children of the
    ones not yet answered started together (each its own process: the two versions' answers
    to one input, say) and read as they finish."""
    import select
    import time

    outs, keys, live = [None] * len(jobs), [None] * len(jobs), {}
    ASKED["asked"] += len(jobs)
    for i, (fn, head, args, kw, per_call, setup, post) in enumerate(jobs):
        key = None if setup is not None else _memo_key(fn, head, args, kw, post)
        if key is not None and key in _MEMO:
            outs[i] = json.loads(_MEMO[key])
            continue
        keys[i] = key
        ASKED["forked"] += 1
        r, pid = _spawn(fn, head, args, kw, keep, setup, post)
        live[r] = (i, pid, time.monotonic() + per_call, [])
    while live:
        now = time.monotonic()
        for r in [r for r, v in live.items() if v[2] <= now]:
            i, pid, _, _ = live.pop(r)
            os.close(r)
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            os.waitpid(pid, 0)
            outs[i] = _fallback(jobs[i], how="timeout")
        if not live:
            break
        ready, _, _ = select.select(list(live), [], [], max(0, min(v[2] for v in live.values())
                                                           - time.monotonic()))
        for r in ready:
            chunk = os.read(r, 1 << 16)
            if chunk:
                live[r][3].append(chunk)
                continue
            i, pid, _, chunks = live.pop(r)
            os.close(r)
            _, status = os.waitpid(pid, 0)
            try:
                outs[i] = json.loads(b"".join(chunks))
            except ValueError:
                outs[i] = _fallback(jobs[i], how="raise", error="died (status %d)" % status,
                                    deliberate=False, inside=True)
    for key, out in zip(keys, outs):
        if key is not None and out.get("how") in ("ret", "lazy", "raise") and \
                "MemoryError" not in (out.get("error"), out.get("lazy_error")) and \
                not str(out.get("error", "")).startswith("died"):
            _MEMO[key] = json.dumps(out)
    return outs


def _fallback(job, **how):
    """The outcome of a call whose child gave no answer (out of time, or died)."""
    base = dict(_facts(job[2], job[3]))
    base["pulled"] = [0] * len(base["total"])
    return dict(base, **how)


def _spawn(fn, head, args, kw, keep, setup, post):
    """Fork the child of one call: (the read end of its pipe, its pid)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            sys.stdout = sys.stderr = io.StringIO()
            try:
                import resource
                with open("/proc/self/statm") as f:
                    size = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
                resource.setrlimit(resource.RLIMIT_AS, (size + CALL_MEMORY, size + CALL_MEMORY))
            except (OSError, ValueError, ImportError):
                pass
            try:
                if setup is not None:
                    setup()
                data = json.dumps(_call(fn, head, args, kw, keep, post)).encode()
            except BaseException as e:  # noqa: B036  out of memory while answering, say
                data = json.dumps({"how": "raise", "error": type(e).__name__, "inside": True,
                                   "deliberate": False, "pulled": [], "total": []}).encode()
            while data:
                data = data[os.write(w, data):]
        finally:
            os._exit(0)
    os.close(w)
    return r, pid


def _show_out(o):
    if o["how"] == "timeout":
        return "runs out of time"
    if o["how"] == "raise":
        return "raises %s" % o["error"]
    if o.get("lazy_error"):
        return "returns an iterator that raises %s when read" % o["lazy_error"]
    if o["how"] == "lazy":
        return "returns an iterator of `%s`" % o.get("text", "")[:120]
    return "returns `%s`" % o.get("text", "")[:120]


def _same_answer(b, a):
    """Whether two calls answered alike: the shown texts and the whole answers' digests."""
    return b.get("text") == a.get("text") and b.get("digest") == a.get("digest")


def _judge(b, a, mutating=()):
    """The finding on one input, or None. The original is the buggy code, so only what no fix
    of a wrong answer needs counts: pulling a whole finite iterator for the same answer the
    original gave after pulling less; a crash where the original returned (not a rejected
    value of another type, not a hang on an endless iterator, not an error raised outside the
    changed function, e.g. in a callback); an error moved from the call into the iteration."""
    if b["how"] in ("ret", "lazy") and a["how"] in ("ret", "lazy") and \
            not b.get("lazy_error") and _same_answer(b, a):
        for pb, pa, total in zip(b["pulled"], a["pulled"], a["total"]):
            # The original read some and stopped (reading none, its answer did not depend on
            # the input: `tail(0, it)` is `()` either way).
            if total is not None and pa >= total and 0 < pb < pa:
                return "reads_whole_input"
    fine = b["how"] in ("ret", "lazy") and not b.get("lazy_error")
    if fine and a["how"] == "timeout" and not a.get("endless"):
        return "crashes"
    error = a.get("error") if a["how"] == "raise" else a.get("lazy_error")
    # Memory counts only for an iterator's first items (a stream made a list); an answer
    # that needs memory, or a number beyond a C type's range, for a large argument may be the
    # fix using that argument (a precision the original ignored).
    if error in ("MemoryError", "OverflowError") and a["how"] == "raise":
        error = None
    if fine and error and not a.get("deliberate") and a.get("inside") and \
            not (a.get("odd") and error in ("TypeError", "AttributeError")):
        return "crashes"
    if b.get("error") == "ProbeError" and a["how"] in ("ret", "lazy") and \
            not a.get("lazy_error"):
        return "swallows_input_error"
    if b["how"] in ("ret", "lazy") and a["how"] in ("ret", "lazy") and any(
            y and not x and not (j < len(mutating) and mutating[j])
            for j, (x, y) in enumerate(zip(b.get("mutated", []), a.get("mutated", [])))):
        return "mutates_input"
    if b["how"] == "raise" and a["how"] == "lazy" and a.get("lazy_error") == b["error"] and \
            b["error"] not in ("MemoryError", "RecursionError"):
        return "raises_later"
    return None


def _longer(v):
    """An iterator argument twice as long: its items, then the same reversed (not repeated:
    a grown input is already a repetition, and a repetition of it keeps answers that only
    coincide, like the first and the last 3000 of 5000 items cycling through five)."""
    if isinstance(v, IterSpec) and v.items:
        return IterSpec(list(v.items) + list(reversed(v.items)))
    return v


def _reads_whole_when_longer(before, after, head, args, kw, keep, per_call):
    """Whether the patched code still reads a whole finite iterator, and more of it than the
    original, for the same answer when every iterator argument is twice as long."""
    a = tuple(_longer(v) for v in args)
    k = {n: _longer(v) for n, v in kw.items()}
    b, x = _runs([(before, head, a, k, per_call, None, None),
                  (after, head, a, k, per_call, None, None)], keep)
    if not _same_answer(b, x):
        return False
    return any(total is not None and pa >= total and pb < pa
               for pb, pa, total in zip(b.get("pulled", []), x.get("pulled", []),
                                        x.get("total", [])))


# Past a float's 53 bits, and a power of ten: a whole number moved this far keeps its decimal
# digits (what a digit-reading function answers from) and its sign.
BIG = 10 ** 18
PRECISION_CALLS = 3  # tested calls tried per argument


def _with(args, kw, slot, v):
    """The call's arguments with one of them (a position, or a keyword's name) set to `v`."""
    if isinstance(slot, int):
        a = list(args)
        a[slot] = v
        return tuple(a), kw
    return args, dict(kw, **{slot: v})


def _answers(fn, head, args, kw, slot, values, keep, per_call):
    """The answers (shown text and digest) for each value at `slot`, or None as soon as one
    is not an answer."""
    out = []
    for i in range(0, len(values), 2):  # two children at a time
        jobs = [(fn, head) + _with(args, kw, slot, v) + (per_call, None, None)
                for v in values[i:i + 2]]
        for o in _runs(jobs, keep):
            if not _answered(o):
                return None
            out.append((o.get("text"), o.get("digest")))
    return out


def _loses_precision(f, before, after, calls, keep, per_call, until):
    """A finding dict when, on one of the tests' calls with a whole number (or its digits)
    moved past a float's precision (BIG), the original tells four neighbouring numbers apart
    and the patched code answers them all alike, while it tells the same four apart without
    BIG and still answers some numbers further apart differently (it reads the number: not a
    cap or a limit a fix set): the number went through a float, exact no more."""
    import time

    tried = {}
    for head, args, kw in calls:
        whole = [(j, v) for j, v in enumerate(args)] + list(kw.items())
        for slot, v in whole:
            if not (type(v) is int or _digits(v)) or _over(until) or \
                    tried.get(slot, 0) >= PRECISION_CALLS:
                continue
            try:
                x, as_given = int(v), type(v)  # a whole number or its digits, moved as given
            except ValueError:
                continue  # digits int() does not read ('²')
            tried[slot] = tried.get(slot, 0) + 1
            for sign in (1, -1) if x >= 0 else (-1, 1):
                near = [as_given(sign * (BIG + abs(x) + d)) for d in range(4)]
                was = _answers(before, head, args, kw, slot, near, keep, per_call)
                if was is None or len(set(was)) < 2:
                    continue  # nothing to lose here
                now = _answers(after, head, args, kw, slot, near, keep, per_call)
                if now is None or len(set(now)) > 1:
                    continue
                # The same four numbers without BIG told apart by the patched code: a fix
                # that answers all four alike at any size (the teens all 'th') is no loss.
                small = [as_given(sign * (abs(x) + d)) for d in range(4)]
                low = _answers(after, head, args, kw, slot, small, keep, per_call)
                if low is None or len(set(low)) < 2:
                    continue
                far = [as_given(sign * (BIG + abs(x) + d * (2 ** 40 + 10 ** 9)))
                       for d in range(1, 9)]
                wide = _answers(after, head, args, kw, slot, far, keep, per_call)
                if wide is None or len(set(wide) | set(now)) < 2:
                    continue
                call = _call_text(f["qualname"], *_with(args, kw, slot, near[0]))
                shown = ", ".join("`%s`" % (t or "")[:40] for t, _ in was)
                return {"kind": "loses_precision", "call": call,
                        "before": "answers %s for %s, %s, %s and %s" % ((shown,) + tuple(near)),
                        "after": "answers `%s` for all four (the number rounded through a "
                                 "float)" % (now[0][0] or "")[:80]}
    return None


def _rebuild_before(f, live_fn, notes):
    """The pre-patch version of `live_fn` with the live module's globals (see the header)."""
    return _rebuild(f["pre_source"], f["qualname"], live_fn, notes)[0]


def _rebuild(source, want, live_fn, notes):
    """(function, scratch): `want`'s code from `source` (the text of `live_fn`'s file, run as a
    scratch module) with the live module's globals and its defaults mapped to the live objects;
    (None, {}) when it cannot be built (said in `notes`)."""
    import builtins
    import types

    mod = sys.modules.get(getattr(live_fn, "__module__", None) or "")
    if mod is None:
        notes.append("%s: its module is not loaded" % want)
        return None, {}
    scratch = {k: getattr(mod, k) for k in ("__name__", "__package__", "__file__", "__spec__",
                                            "__loader__", "__path__") if hasattr(mod, k)}
    scratch["__builtins__"] = builtins
    try:
        code = compile(source, mod.__file__, "exec")
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = io.StringIO()
        try:
            exec(code, scratch)
        finally:
            sys.stdout, sys.stderr = saved
    except BaseException as e:  # noqa: B036
        notes.append("%s: its file's text does not load apart (%s)" % (want, type(e).__name__))
        return None, {}

    def find(c, out):
        for k in c.co_consts:
            if isinstance(k, types.CodeType):
                if getattr(k, "co_qualname", k.co_name) == want or (
                        not hasattr(k, "co_qualname") and k.co_name == want.rsplit(".", 1)[-1]):
                    out.append(k)
                find(k, out)
        return out

    # A def in a branch the module did not take (`if sys.version_info >= …:`) made no
    # function: the one that ran is the version.
    pcode, pre_fn = None, None
    for k in find(code, []):
        pcode, pre_fn = k, function_of(k)
        if pre_fn is not None:
            break
    if pre_fn is None:
        notes.append("%s: no function object in its file's text" % want)
        return None, {}
    live = vars(mod)
    same = {}
    for k, v in scratch.items():
        if k in live and not k.startswith("__"):
            same[id(v)] = live[k]

    def mapped(v):
        return same.get(id(v), v)

    cells = []
    for i, name in enumerate(pcode.co_freevars):
        if name == "__class__":
            owner = live_fn.__qualname__.rsplit(".", 1)[0]
            cls = mod
            for part in owner.split("."):
                cls = getattr(cls, part, None)
            cells.append(types.CellType(cls))
        else:
            cells.append(pre_fn.__closure__[i])
    fn = types.FunctionType(pcode, live, pcode.co_name,
                            tuple(mapped(d) for d in pre_fn.__defaults__ or ()) or None,
                            tuple(cells) or None)
    if pre_fn.__kwdefaults__:
        fn.__kwdefaults__ = {k: mapped(v) for k, v in pre_fn.__kwdefaults__.items()}
    return fn, scratch


# Methods that change their object in place (lists, dicts, sets, deques, files).
_IN_PLACE = {"append", "extend", "insert", "remove", "pop", "popitem", "clear", "update",
             "setdefault", "add", "discard", "sort", "reverse", "appendleft", "extendleft",
             "popleft", "write", "__setitem__", "__delitem__"}


def _stores_into(source, qualname):
    """The parameters the function's own text changes in place (`tree[k] = v`, `node.x = v`,
    `del d[k]`, `acc.append(v)`): changing them is what it is for, whatever a patch stores
    there (glom's aggregation state), even where the tests' calls never reached the store."""
    import ast

    try:
        node = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    for part in qualname.split("."):
        node = next((n for n in ast.iter_child_nodes(node)
                     if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                     and n.name == part), None)
        if node is None:
            return set()
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set()
    a = node.args
    params = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}

    def root(e):
        while isinstance(e, (ast.Subscript, ast.Attribute)):
            e = e.value
        return e.id if isinstance(e, ast.Name) else None
    out = set()
    for n in ast.walk(node):
        targets = []
        if isinstance(n, (ast.Assign, ast.Delete)):
            targets = n.targets
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign)):
            targets = [n.target]
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                n.func.attr in _IN_PLACE:
            out.add(root(n.func.value))
        out |= {root(t) for t in targets if isinstance(t, (ast.Subscript, ast.Attribute))}
    return out & params


def _module_constants(mod):
    """The str and int values the module binds at its top level (sentinels, markers)."""
    out = set()
    for v in (vars(mod).values() if mod is not None else ()):
        if type(v) is str and v or type(v) is int and v not in (0, 1, -1):
            out.add((type(v), v))
    return out


def _has_landmark(values, landmarks, depth=0):
    for v in values:
        if type(v) in (str, int) and (type(v), v) in landmarks:
            return True
        if depth < 2 and type(v) in (list, tuple):
            if _has_landmark(v, landmarks, depth + 1):
                return True
    return False


def _trim_defaults(fn, head, args, kw):
    """The call without the arguments left to their defaults (the very default object): what
    the caller passed. Candidates may differ in the parameters they add with a default."""
    n = fn.__code__.co_argcount
    pos = list(head) + list(args)
    d = fn.__defaults__ or ()
    if len(pos) == n:
        while len(pos) > max(len(head), n - len(d)) and \
                pos[-1] is d[len(pos) - 1 - (n - len(d))]:
            pos.pop()
    kd = fn.__kwdefaults__ or {}
    kw = {k: v for k, v in kw.items() if not (k in kd and v is kd[k])}
    return pos[:len(head)], pos[len(head):], kw


# The built-in iterators over a sequence (`iter([1, 2])`, `iter(range(3))`, …): a copy of one
# reads the same items from the same place without moving the one the code is given.
_SEQ_ITERS = tuple({type(iter(x)) for x in ([], (), range(0), range(2 ** 64, 2 ** 64 + 1), "",
                                            "\u0394", b"", bytearray())})
# Items read from such a copy at most (more: recorded as unknown).
ITER_ITEMS = 1000


def _iter_items(v):
    """An iterator argument's items when a copy can read them without side effects (a built-in
    iterator over a sequence), else [] (a generator's items are not known before it runs)."""
    import copy
    import itertools

    if type(v) not in _SEQ_ITERS:
        return []
    try:
        items = copy.deepcopy(list(itertools.islice(copy.copy(v), ITER_ITEMS + 1)))
    except BaseException:  # noqa: B036
        return []
    return items if len(items) <= ITER_ITEMS else []


# Which recorded calls a failing test made: (function index, call key); the test running now.
FROM_FAILING = set()
NOW = {"failing": False}


def _record_calls(fns, deadline, notes, trim=False):
    """The failing tests and up to `sample` of their neighbours under the profile hook: per
    function its distinct calls {key: (head, args, kw)} and its live function object; the
    run's exit code and runner. `trim`: arguments left to their defaults are not kept."""
    targets = target_codes(fns)
    seen = [dict() for _ in fns]
    live_fns = [None] * len(fns)

    def record(frame, i):
        fn = function_of(frame.f_code)
        if fn is None:
            notes.add("%s: not one function object" % fns[i]["qualname"])
            return
        live_fns[i] = fn
        head, args, kw = call_args(frame, fns[i].get("bound"))
        if trim:
            head, args, kw = _trim_defaults(fn, head, args, kw)
        try:
            key = ADDRESS.sub(" at 0x…", canon((args, sorted(kw.items()))))
        except BaseException:  # noqa: B036
            return
        if NOW["failing"] and (key in seen[i] or len(seen[i]) < MAX_SEEN):
            FROM_FAILING.add((i, key))
        if key in seen[i] or len(seen[i]) >= MAX_SEEN:
            return
        import copy

        def keep(v, how):
            if hasattr(v, "__next__") and not isinstance(v, (str, bytes, dict)):
                return IterSpec(_iter_items(v))
            try:
                return how(v)
            except BaseException:  # noqa: B036
                # Not copyable (a lock, a file, a frame inside): the object itself, as the
                # test leaves it. Each call is asked in a forked child, so no call changes it
                # for the next; both versions are asked on the same state.
                notes.add("%s: an argument kept as the test left it (not copyable)"
                          % fns[i]["qualname"])
                return v
        seen[i][key] = ([keep(h, copy.copy) for h in head],
                        [keep(a, copy.deepcopy) for a in args],
                        {n: keep(v, copy.deepcopy) for n, v in kw.items()})

    prof = calls_hook(targets, record, deadline, fns, notes)
    pytest, runner, _ = load_pytest()
    ids = set(cfg["ids"])
    sample = int(cfg.get("sample", 0))

    class Record:
        @pytest.hookimpl(trylast=True)
        def pytest_collection_modifyitems(self, session, config, items):
            seen_ids = set()
            items[:] = [it for it in items if not (it.nodeid in seen_ids or seen_ids.add(it.nodeid))]
            keep = {it.nodeid for it in nearest(items, ids)[:sample]} | ids
            dropped = [it for it in items if it.nodeid not in keep]
            if dropped:
                config.hook.pytest_deselected(items=dropped)
            items[:] = [it for it in items if it.nodeid in keep]

        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_call(self, item):
            NOW["failing"] = item.nodeid in ids
            sys.setprofile(prof)
            try:
                yield
            finally:
                sys.setprofile(None)
                NOW["failing"] = False

    args = ["-q", "-p", "no:cacheprovider", "--rootdir", ws, "-o", "addopts=", "-W", "ignore",
            "--continue-on-collection-errors"] + list(cfg.get("args", [])) + list(cfg["ids"]) \
        + [t for t in cfg.get("tests", []) if t not in ids]
    saved = sys.stdout
    sys.stdout = io.StringIO()
    try:
        rc = int(pytest.main(args, plugins=[Record()]))
    except BaseException as e:  # noqa: B036
        rc = "%s" % type(e).__name__
    finally:
        sys.stdout = saved
    return seen, live_fns, rc, runner


def _hypothesis():
    """Hypothesis (given, settings, strategies, HealthCheck, Phase): the project's own when its
    tests loaded it, else the base image's copy (images/base/setup.sh), on the path only while
    it loads."""
    if "hypothesis" not in sys.modules:
        sys.path.insert(0, HYPOTHESIS_SITE)
        try:
            import hypothesis  # noqa: F401
        finally:
            sys.path.remove(HYPOTHESIS_SITE)
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st
    return given, settings, st, HealthCheck, Phase


def _seed():
    from hypothesis import seed
    return seed


def _inputs(st, calls):
    """What Hypothesis draws for one function from its recorded calls: (call index, args, kw)
    shaped like the recorded ones and widened (`_shape_strategy`), the recorded calls as they
    were, and each grown a thousandfold (sizes no generated value reaches; sequences also as
    iterators)."""
    width = max(len(c[1]) for c in calls)
    places = [_shape_strategy([c[1][j] for c in calls if len(c[1]) > j]) for j in range(width)]
    kwnames = sorted({n for c in calls for n in c[2]})
    kws = {n: _shape_strategy([c[2][n] for c in calls if n in c[2]]) for n in kwnames}

    def one_call(ci):
        c = calls[ci]
        return st.tuples(st.just(ci), st.tuples(*[places[j] for j in range(len(c[1]))]),
                         st.fixed_dictionaries({n: kws[n] for n in c[2]}))

    def twin(ci, lazy):
        def grow(x):
            y = _scaled(x)
            return near(IterSpec(list(y)) if lazy and type(y) in (list, tuple) and y else y)
        return (ci, tuple(grow(x) for x in calls[ci][1]),
                {n: grow(x) for n, x in calls[ci][2].items()})
    which = st.integers(0, len(calls) - 1)
    return st.one_of(which.flatmap(one_call),
                     which.map(lambda ci: (ci, tuple(calls[ci][1]), dict(calls[ci][2]))),
                     which.map(lambda ci: twin(ci, False)),
                     which.map(lambda ci: twin(ci, True)))


def _start(trim):
    """What both modes begin with: the boxes from the input, the alarm, one recording run
    of the tests (`_record_calls`) and the seconds it took."""
    import time

    signal.signal(signal.SIGALRM, on_alarm)
    started = time.monotonic()
    per_call = float(cfg.get("per_call_s", 1.0))
    per_fn = float(cfg.get("per_fn_s", 10.0))
    deadline = started + float(cfg.get("deadline_s", 60))
    fns = cfg["functions"]
    notes = set()
    seen, live_fns, rc, runner = _record_calls(fns, deadline, notes, trim=trim)
    recorded = time.monotonic() - started
    return started, per_call, per_fn, deadline, fns, notes, seen, live_fns, rc, runner, recorded


# --- agreements: two ways of asking one question that the original answers alike ---------
#
# A patch that fixes only the path the failing test takes leaves the same bug on a sibling
# path; the original, buggy on both, answered them alike, the patched code does not. Which
# pairs of calls ask one question is not guessed per trick but found on the original: a pair
# counts only when the original answered both sides of every drawn input alike (at least
# AGREE_MIN inputs, AGREE_KINDS distinct answers, never otherwise; up to AGREE_ENOUGH inputs
# are asked, and a pair neither side of which answers on AGREE_TRIES inputs is let go) — except
# a failing test's own call (asked either way), where the bug may break it if the patched code
# keeps it there: the fix restores it where the tests ask for it; and a pair the patched code
# breaks on a failing test's call asked only through two variants of it (neither side is the
# call) is dropped: the fix changes that relation itself. The inputs are each tested
# value's neighbours (`_near_values`, not left to the draw: all of them must agree), then the
# tests' calls and the drawn inputs.
# The pairs tried:
#   a keyword argument that is a function, left out and given as the identity;
#   an argument that the tests pass both as one value and as a list of values, given as the
#     one value and as a list of it (the one item of the answer);
#   a number given as its digits (and digits as their number), a list as a tuple (and a
#     tuple as a list): answers compared as plain values (lists, whole floats as ints), and
#     answers that differ only by the value itself passed through (a fill value the original
#     ignored, so agreed for that reason alone) are not a difference;
#   a word in lower case and capitalised (the first answer capitalised);
#   another function of the module with the same parameters that neither calls (its answer
#     and this one's as lists when they are sequences or iterators), unless the patch breaks
#     that agreement on most inputs (the bug made the function behave like its sibling).
# A finding (`breaks_agreement`) is a drawn input on which the patched code answers the two
# sides differently where the original answered them alike, or answers one side and raises on
# the other from its own code (a fix of one path makes it refuse what it should refuse there
# only) — unless it refuses one side on most inputs (a check a fix added for one form).

AGREE_MIN = 5
AGREE_KINDS = 3
AGREE_POOL = 200
AGREE_ENOUGH = 30
AGREE_NEAR = 60
AGREE_TRIES = 20


def _identity(x):
    return x


def _as_items(r):
    return list(r) if type(r) in (list, tuple) else r


def _plain(r):
    """An answer as a value: sequences as lists, whole floats (and -0.0) as ints."""
    if type(r) in (list, tuple):
        return [_plain(x) for x in r]
    if type(r) is float and r.is_integer() and abs(r) < 2 ** 53:
        return int(r)
    return r


def _digits(v):
    """Whether a value is the text of a whole number ('12', '-3')."""
    return type(v) is str and v.lstrip("-").isdigit()


def _capitalised(r):
    return r[:1].upper() + r[1:] if type(r) is str else r


def _only_item(r):
    if type(r) in (list, tuple) and len(r) == 1:
        return r[0]
    return "<not one item: %s>" % type(r).__name__


def _params(fn):
    import inspect

    try:
        return [(p.name, p.kind) for p in inspect.signature(fn).parameters.values()]
    except (TypeError, ValueError):
        return None


def _names_in(code):
    """Every global name a code object and the code nested in it read."""
    names = set(code.co_names)
    for c in code.co_consts:
        if hasattr(c, "co_names"):
            names |= _names_in(c)
    return names


def _agreements(f, before, after, mod, calls, fns, live_fns, notes):
    """The pairs to try for one function: {"what", "fns": (left before, left after, right
    before, right after), "pair": (ci, args, kw) -> ((args, kw, post), (args, kw, post)) or
    None}."""
    import functools
    import types

    out = []
    same = (before, after, before, after)
    plain = (types.FunctionType, types.BuiltinFunctionType, functools.partial)
    for p in sorted({n for c in calls for n in c[2]}):
        vals = [c[2][p] for c in calls if p in c[2]]
        if not vals or not all(isinstance(v, plain) for v in vals):
            continue

        def pair(ci, a, k, p=p):
            left = {n: v for n, v in k.items() if n != p}
            return (a, left, None), (a, dict(left, **{p: _identity}), None)
        out.append({"what": "without `%s=` and with `%s=` the identity" % (p, p), "fns": same,
                    "pair": pair})
    width = max(len(c[1]) for c in calls)
    for j in range(width):
        vals = [c[1][j] for c in calls if len(c[1]) > j]
        seqs = [v for v in vals if type(v) in (list, tuple)]
        if not seqs or not any(type(v) in (str, int, bytes) for v in vals):
            continue

        def pair(ci, a, k, j=j, wrap=type(seqs[0])):
            if len(a) <= j or type(a[j]) not in (str, int, bytes):
                return None
            b = list(a)
            b[j] = wrap([a[j]])
            return (a, k, None), (tuple(b), k, _only_item)
        out.append({"what": "argument %d as one value and as a list of it" % (j + 1),
                    "fns": same, "pair": pair, "retyped": True})
    for j in range(width):
        # The same value as another type: a number and its digits, a list and a tuple
        # (answers compared as plain values). Whether the code takes both is the original's
        # to show: a pair counts only where it answered both alike.
        vals = [c[1][j] for c in calls if len(c[1]) > j]
        digits = any(_digits(v) for v in vals)
        for src, conv, what, seen in (
                (int, str, "a number and as its digits", int in map(type, vals)),
                (str, int, "digits and as their number", digits),
                (list, tuple, "a list and as a tuple", list in map(type, vals)),
                (tuple, list, "a tuple and as a list", tuple in map(type, vals))):
            if not seen:
                continue

            def pair(ci, a, k, j=j, src=src, conv=conv):
                if len(a) <= j or type(a[j]) is not src or (src is str and not _digits(a[j])):
                    return None
                b = list(a)
                b[j] = conv(a[j])
                return (a, k, _plain), (tuple(b), k, _plain)
            out.append({"what": "argument %d as %s" % (j + 1, what), "fns": same,
                        "pair": pair, "echo": j, "retyped": True})
    for j in range(width):
        # A word in lower case and capitalised, the first answer capitalised: what a word
        # function that keeps the case it was given answers alike.
        if not any(type(c[1][j]) is str and c[1][j][:1].isalpha()
                   for c in calls if len(c[1]) > j):
            continue

        def pair(ci, a, k, j=j):
            if len(a) <= j or type(a[j]) is not str or not a[j][:1].isalpha():
                return None
            low = a[j].lower()
            if low.capitalize() == low:
                return None
            return (_with(a, k, j, low) + (_capitalised,),
                    _with(a, k, j, low.capitalize()) + (None,))
        out.append({"what": "argument %d in lower case (the answer capitalised) and capitalised"
                            % (j + 1), "fns": same, "pair": pair})
    if f.get("bound") or "." in f["qualname"] or mod is None:
        return out
    mine = _params(after)
    if not mine:
        return out
    changed = {x["qualname"]: i for i, x in enumerate(fns) if "." not in x["qualname"]}
    for name, g in sorted(vars(mod).items()):
        if name == f["qualname"] or not isinstance(g, types.FunctionType) or \
                g.__module__ != mod.__name__ or _params(g) != mine:
            continue
        # One calling the other agrees by construction (and mixes the two versions).
        if f["qualname"] in _names_in(g.__code__) or name in _names_in(after.__code__) or \
                name in _names_in(before.__code__):
            continue
        g_before = g
        if name in changed:
            live = live_fns[changed[name]] or _live_function(fns[changed[name]], live_fns)
            g_before = live and _rebuild_before(fns[changed[name]], live, notes)
            if not g_before:
                continue

        def pair(ci, a, k):
            return (a, k, _as_items), (a, k, _as_items)
        out.append({"what": "`%s` and `%s` on the same arguments" % (f["qualname"], name),
                    "fns": (before, after, g_before, g), "pair": pair, "other": name})
    return out


def _echoed(rel, p, left, right):
    """Whether the two answers differ only by the retyped value itself, passed through into
    the answer (a fill value, a default returned): the original that ignored the argument
    agreed with itself for that reason alone."""
    j = rel.get("echo")
    if j is None:
        return False
    (la, _, _), (ra, _, _) = p
    left, right = left or "", right or ""
    try:
        back = right.replace(canon(ra[j]), canon(la[j]))
    except BaseException:  # noqa: B036
        return False
    if max(len(left), len(right)) < ANSWER_CHARS:
        return back == left
    # A cut text (the value repeated past the limit): up to the last item both show whole.
    n = back.rfind(", ", 0, min(len(back), len(left)))
    return n > 0 and back[:n] == left[:n]


def _answered(o):
    return o["how"] in ("ret", "lazy") and not o.get("lazy_error")


def _raised_here(o):
    """An error the code under test raised (on call or when its iterator was read)."""
    return (o["how"] == "raise" or bool(o.get("lazy_error"))) and bool(o.get("inside")) and \
        not str(o.get("error", "")).startswith("died")


def _side(text):
    """An answer as a broken agreement's finding shows it."""
    return "answers `%s`" % (text or "")[:80]


def _broken_agreement(rel, f, pool, heads, keep, per_call, until, failing=frozenset(),
                      near=()):
    """A finding dict when the original keeps `rel` on the pool (the tests' calls and up to
    AGREE_ENOUGH drawn inputs) and on every input of `near`, and the patched code breaks it,
    else None. `failing`: the texts of the failing tests' own calls, where the original may
    break it if the patched code keeps it."""
    import itertools
    import time

    lb_fn, la_fn, rb_fn, ra_fn = rel["fns"]

    def both(ci, p, left_fn, right_fn, answers_only=False):
        """Both sides' outcomes; with `answers_only`, the right side is None when
        the left one did not answer."""
        (la, lk, lp), (ra, rk, rp) = p
        # Asked together (two children at once); the right side's answer is set aside when
        # the left one did not answer.
        left, right = _runs([(left_fn, heads[ci], la, lk, per_call, None, lp),
                             (right_fn, heads[ci], ra, rk, per_call, None, rp)], keep)
        if answers_only and not _answered(left):
            return left, None
        return left, right

    def sides(ci, p, left_fn, right_fn):
        """Both sides' answers' texts, or None when either did not answer."""
        left, right = both(ci, p, left_fn, right_fn, answers_only=True)
        if right is not None and _answered(right):
            return left.get("text"), right.get("text")
        return None

    def apart(ci, p):
        """The patched code's two answers when they differ (not only by an echoed value), or
        an answer one way and an error the function raised the other: (left, right, raised)."""
        left, right = both(ci, p, la_fn, ra_fn)
        if _answered(left) and _answered(right):
            got = (left.get("text"), right.get("text"))
            if got[0] != got[1] and not _echoed(rel, p, *got):
                return _side(got[0]), _side(got[1]), False
            return None
        # A timeout, a death or an error on the way in (binding the arguments) is not the
        # code's answer; an error raised in the function's own file is.
        if _answered(left) and _raised_here(right) and not (
                rel.get("retyped") and right.get("error") in ("TypeError", "AttributeError")):
            # (The retyped value refused for its type — a tuple has no `append` — is the
            # value of another type the code never takes, not an answer.)
            return _side(left.get("text")), _show_out(right), True
        if _answered(right) and _raised_here(left):
            return _show_out(left), _side(right.get("text")), True
        return None

    kept, answers, tried, restored = [], set(), 0, []
    drawn = 0  # kept inputs besides the neighbours
    for is_near, (ci, a, k) in itertools.chain(((True, t) for t in near),
                                              ((False, t) for t in pool)):
        if _over(until) or drawn >= AGREE_ENOUGH:
            break
        if tried >= AGREE_TRIES and not kept:
            return None  # the code does not take the other way of asking
        try:
            p = rel["pair"](ci, a, k)
        except (ValueError, TypeError, OverflowError):
            continue  # digits int() does not read ('²'), say
        if p is None:
            continue
        tried += 1
        got = sides(ci, p, lb_fn, rb_fn)
        if got is None:
            continue
        sides_tested = {_call_text(f["qualname"], *p[0][:2]),
                        _call_text(f["qualname"], *p[1][:2])} & failing
        if got[0] != got[1]:
            if _call_text(f["qualname"], a, k) in failing or sides_tested:
                # The bug itself may break it on a failing test's own call (asked either
                # way): it counts there only if the patched code answers both sides alike.
                restored.append((ci, p))
                continue
            return None  # the original keeps no such agreement
        # A failing test's call asked only through two variants of it (lower-cased and
        # capitalised, say): the fix may change exactly that relation (a slug made lower case).
        variant = _call_text(f["qualname"], a, k) in failing and not sides_tested
        kept.append((ci, p, got[0], variant))
        answers.add(got[0])
        drawn += not is_near
    if len(kept) < AGREE_MIN or len(answers) < AGREE_KINDS:
        return None
    for ci, p in restored:
        # The fix makes the failing tests' calls keep the agreement, or it is not one the
        # tests ask for (a fix that tells the two ways apart, as the failing test demands).
        got = sides(ci, p, la_fn, ra_fn)
        if got is None or got[0] != got[1]:
            return None
    broken, checked = [], 0
    for ci, p, text, variant in kept:
        if _over(until):
            break
        checked += 1
        got = apart(ci, p)
        if got and variant:
            return None  # what the failing test asks changes the relation itself
        if got:
            call = _call_text(f["qualname"], p[0][0], p[0][1])
            broken.append((len(call), call, text, got, ci, p))
    if not broken:
        return None
    if (rel.get("other") or all(b[3][2] for b in broken)) and 2 * len(broken) > checked:
        # Broken on most inputs: the bug made the function behave like its sibling (funcy's
        # `omit` with `in` for `not in` is `project`), and the fix undoes that; or one way of
        # asking is now refused outright (a check the fix added for one form). A fix of one
        # path breaks the agreement on a few inputs and keeps it on the rest.
        return None
    _, call, text, (left, right, _), ci, p = min(broken, key=lambda b: b[:2])
    # Replayed once: a timer's or memory's edge is not evidence.
    if not apart(ci, p):
        return None
    return {"kind": "breaks_agreement", "call": call,
            "before": "answers `%s` both ways (%s, on %d inputs alike: tested, their "
                      "neighbours, drawn)" % (text[:100], rel["what"], len(kept)),
            "after": "%s one way and %s the other" % (left, right)}


def differ():
    import time

    (started, per_call, per_fn, deadline, fns, notes,
     seen, live_fns, rc, runner, recorded) = _start(trim=False)
    given, settings, st, HealthCheck, Phase = _hypothesis()
    seed = _seed()
    import itertools
    import zlib

    out = []
    # The box: `per_fn` CPU seconds per changed function in all (`_spent`), each function's
    # share what is left divided among the functions still to test (a function no test
    # called, or one done early, leaves its time to the next); the wall clock's `deadline`
    # guards against a hang.
    WALL_END[0] = deadline
    budget_end = _spent() + per_fn * len(fns)
    for i, f in enumerate(fns):
        row = {"fn": i, "examples": 0, "differ": 0, "findings": [], "calls": len(seen[i])}
        out.append(row)
        if not seen[i]:
            row["note"] = "no test called it"
            continue
        fn_start = _spent()
        if _over(budget_end):
            row["note"] = "no time left"
            continue
        share = (budget_end - fn_start) / (len(fns) - i)
        fnotes = []
        _memo_reset()
        before = _rebuild_before(f, live_fns[i], fnotes)
        if before is None:
            row["note"] = "; ".join(fnotes)
            continue
        after = live_fns[i]
        mod = sys.modules.get(after.__module__)
        keep = {id(v): v for v in vars(mod).values()} if mod else {}
        calls = list(seen[i].values())
        failing = {_call_text(f["qualname"], c[1], c[2])
                   for key, c in seen[i].items() if (i, key) in FROM_FAILING}
        landmarks = _module_constants(mod)
        # Places (positions, keywords) where the tests pass lists and never a tuple.
        list_slots = {j for j in range(max(len(c[1]) for c in calls))
                      if {type(c[1][j]) for c in calls if len(c[1]) > j} & {list, tuple}
                      == {list}}
        list_slots |= {n for c in calls for n in c[2]
                       if {type(d[2][n]) for d in calls if n in d[2]} & {list, tuple} == {list}}
        heads = [c[0] for c in calls]
        width = max(len(c[1]) for c in calls)
        kwnames = sorted({n for c in calls for n in c[2]})

        # Arguments the original changes in place on the tests' own calls: changing them is
        # then its contract (a parser appending to the node it was given), not a finding.
        mutating = {}
        for ci, c in enumerate(calls):
            o = _run(before, c[0], c[1], c[2], keep, per_call)
            mutating[ci] = o.get("mutated") or []
        any_mutated = [any(m[j] if j < len(m) else False for m in mutating.values())
                       for j in range(width + len(kwnames))]
        stored = _stores_into(f["pre_source"], f["qualname"])
        names = [n for n, _ in _params(before) or ()]
        for ci, c in enumerate(calls):
            # Per call: its positional arguments, then its keywords in their order.
            passed = names[len(c[0]):len(c[0]) + len(c[1])] + list(c[2])
            mutating[ci] = [(j < len(any_mutated) and any_mutated[j]) or
                            (j < len(passed) and passed[j] in stored)
                            for j in range(max(len(any_mutated), len(passed)))]

        # The share's phases, each counted work with a deadline against a hang or a slow
        # machine: the precision check first (a few calls per tested number) up to 15% of
        # it, the drawn inputs up to 60%, the agreements to its end (with what the draw left).
        lost = _loses_precision(f, before, after, calls, keep, per_call,
                                fn_start + share * 0.15)
        if lost:
            row["findings"].append(lost)
        drawn = _inputs(st, calls)
        fn_deadline = fn_start + share * 0.6
        last = {}

        pool = [(ci, tuple(c[1]), dict(c[2])) for ci, c in enumerate(calls)]
        # Each tested value's neighbours, asked by every agreement besides the drawn inputs
        # (not left to the draw): a patch that fixed the tested word or number and broke
        # its neighbours is seen there.
        def distinct(ts, cap):
            """The first `cap` of `ts` whose calls read differently."""
            out, texts = [], set()
            for t in ts:
                text = _call_text(f["qualname"], t[1], t[2])
                if text not in texts and len(out) < cap:
                    texts.add(text)
                    out.append(t)
            return out

        # Per tested call, each argument (keywords too) moved to a neighbour, marked whether
        # it is a positional one of `_near_values` (what the agreements ask). A mapping's
        # neighbour is also itself with lookups that raise (an error the code should let
        # through: `swallows_input_error`).
        per_call_near = []
        for ci, c in enumerate(calls):
            mine = []
            for j, v in list(enumerate(c[1])) + list(c[2].items()):
                for w in _near_values(v) + ([Faulty(v)] if type(v) is dict else []):
                    a, k = _with(c[1], c[2], j, w)
                    mine.append((isinstance(j, int) and not isinstance(w, Faulty),
                                 (ci, tuple(a), dict(k))))
            per_call_near.append(mine)
        near_pool = distinct([t for mine in per_call_near for positional, t in mine
                              if positional], AGREE_NEAR)
        # The crash checks' neighbours: of every argument, taken from each tested call in
        # turn so that a cap reaches all of them (the calls that take a default are often the
        # last ones).
        near_checks = distinct(
            [t for _, t in itertools.chain.from_iterable(
                itertools.zip_longest(*per_call_near, fillvalue=(False, None))) if t],
            NEAR_CHECKS)

        def _ignored_there(ci, a, k, b):
            """Whether the original answered input (a, k) exactly as it answered a tested call
            that differs from it in one argument only: there the bug made that argument
            irrelevant (marko's `group(n)` gave the whole match for every n but 0), so its
            answer says nothing of what the argument's value should give, and the patched
            code's error on a value far from the tested ones (`group(2000)`: no such group)
            is no crash where the original answered. Not when that answer is one of the
            arguments (a caller's default, given back for every index out of range: the
            answer did depend on the value, it was out of range both times)."""
            given_back = {_safe_canon(v) for v in list(a) + list(k.values())}
            if b.get("text") in given_back:
                return False
            for _, ac, kc in calls:
                if len(ac) != len(a) or set(kc) != set(k):
                    continue
                apart = [j for j in range(len(a)) if not _same_value(a[j], ac[j])] + \
                    [n for n in k if not _same_value(k[n], kc[n])]
                if len(apart) != 1:
                    continue
                # On the drawn input's own head (a bound call's object): only the one
                # argument differs.
                o = _run(before, heads[ci], ac, kc, keep, per_call)
                if _answered(o) and (o.get("text"), o.get("digest")) == \
                        (b.get("text"), b.get("digest")):
                    return True
            return False

        asking_near = [False]

        def check(t):
            ci, a, k = t
            if _over(fn_deadline):
                return
            row["examples"] += 1
            if not asking_near[0] and len(pool) < AGREE_POOL:
                pool.append(t)
            b, x = _runs([(before, heads[ci], a, k, per_call, None, None),
                          (after, heads[ci], a, k, per_call, None, None)], keep)
            if b["how"] == "timeout":
                return  # nothing to compare with
            if x["how"] == "timeout":
                # Out of time counts only when three times the time does not do either (a busy
                # machine slows one call, not a loop that never ends).
                x = _run(after, heads[ci], a, k, keep, per_call * 3)
            text = _call_text(f["qualname"], a, k)
            if (b.get("how"), b.get("error")) != (x.get("how"), x.get("error")) or \
                    not _same_answer(b, x):
                row["differ"] += 1
                if "differ_call" not in row or len(text) < len(row["differ_call"]):
                    row.update(differ_call=text, differ_before=_show_out(b),
                               differ_after=_show_out(x))
            kind = _judge(b, x, mutating[ci])
            if kind == "reads_whole_input" and not _reads_whole_when_longer(
                    before, after, heads[ci], a, k, keep, per_call):
                # A fix that needs more items for the same answer (the original stopped at
                # the first item for the wrong reason) still stops early on a longer input;
                # a patch that materializes reads all of it.
                kind = None
            if kind == "crashes" and _made(list(a) + list(k.values())):
                kind = None
            if kind == "crashes" and x.get("list_changed") and (
                    any(j in list_slots and type(v) is not list for j, v in enumerate(a)) or
                    any(n in list_slots and type(v) is not list for n, v in k.items())):
                # A tuple or an iterator drawn where the tests pass a list, and the code
                # extends the list it is given (a parser appending to its options): that
                # stand-in is a value of another type for it, refused as an odd value is (the
                # original, which the bug kept off that line, would refuse it too).
                kind = None
            if kind == "crashes" and _has_landmark(list(a) + list(k.values()), landmarks):
                # One of the module's own constants (a sentinel passed as itself): what the
                # code does with it is the code's contract, not a neighbourhood of the tests.
                kind = None
            if kind == "crashes" and _ignored_there(ci, a, k, b):
                kind = None
            if kind is not None:
                sb, sx = _show_out(b), _show_out(x)
                if kind == "reads_whole_input":
                    read = [(pb, pa, n) for pb, pa, n in zip(b["pulled"], x["pulled"], x["total"])
                            if n is not None and pa >= n and 0 < pb < pa][0]
                    sb += " after reading %d of the iterator's %d items" % (read[0], read[2])
                    sx += " after reading all %d" % read[1]
                if kind == "mutates_input":
                    i = [j for j, (u, v) in enumerate(zip(b["mutated"], x["mutated"]))
                         if v and not u][0]
                    sb += ", leaving its arguments as they were"
                    sx += " and changes argument %d in place" % (i + 1)
                last.update(kind=kind, call=text, before=sb, after=sx)
                raise _Found(kind)

        # The tested values' neighbours first, every one asked and not left to the draw
        # (nor to where a derandomized draw happens to go): a patch that crashes one step
        # from a tested input is seen whatever the draw reaches. Replayed once, as
        # Hypothesis replays its own.
        asking_near[0] = True
        for t in near_checks:
            if _over(fn_start + share * 0.3):
                break
            try:
                check(t)
            except _Found:
                seen_first = dict(last)
                try:
                    check(t)
                except _Found:
                    row["findings"].append(seen_first)
                    break
                fnotes.append("a %s on `%s` did not repeat, not counted"
                              % (seen_first["kind"], seen_first["call"][:80]))
                last.clear()
        asking_near[0] = False
        if not last:
            # Seeded by the function's name, not (as `derandomize` is) by the source of
            # `check`: the inputs drawn do not move when this script's text does.
            run = seed(zlib.crc32(f["qualname"].encode()))(
                settings(max_examples=int(cfg.get("examples", 200)), deadline=None,
                         database=None, report_multiple_bugs=False,
                         suppress_health_check=list(HealthCheck),
                         phases=[Phase.generate, Phase.shrink])(given(drawn)(check)))
            try:
                run()
            except _Found:
                row["findings"].append(dict(last))
            except BaseException as e:  # noqa: B036
                if type(e).__name__ == "FlakyFailure" and last:
                    # Seen, then not on the replay (a timer's or memory's edge): not evidence.
                    fnotes.append("a %s on `%s` did not repeat, not counted"
                                  % (last["kind"], last["call"][:80]))
                else:
                    fnotes.append("%s: %s" % (type(e).__name__, str(e)[:120]))
        until = fn_start + share
        found = None
        for rel in _agreements(f, before, after, mod, calls, fns, live_fns, fnotes):
            found = _broken_agreement(rel, f, pool, heads, keep, per_call, until, failing,
                                      near_pool)
            if found:
                row["findings"].append(found)
                break
        if _over(until) and not found:
            fnotes.append("its %.1f CPU s ran out before every agreement was asked" % share)
        if fnotes:
            row["note"] = "; ".join(fnotes)
    emit({"functions": out, "rc": rc, "runner": runner, "notes": sorted(notes),
          "record_s": round(recorded, 2), "total_s": round(time.monotonic() - started, 2),
          "cpu_s": round(_spent(), 2), "asked": ASKED["asked"], "forked": ASKED["forked"]})


# --- consensus: passing candidates against each other (src/verify/consensus.rs drives it) ---
#
# Input: differ's, with "functions": [{"file", "qualname", "bound"}] (every function any
# candidate changes) and "versions": [{file: text}] (per candidate, each changed file as that
# candidate leaves it), run in the UNPATCHED workspace. The calls are recorded as differ
# records them, without the arguments left to their defaults (candidates may add a parameter
# with one); for each candidate, each changed function's code is rebuilt from that
# candidate's text (as differ rebuilds the pre-patch version) and swapped into the live
# function object in the forked child of each call, with the functions and methods it adds,
# so a candidate's versions of all the functions answer together. Hypothesis draws inputs for each recorded function (`_inputs`),
# every candidate answers each. An input where an answer runs out of time, is a deliberate
# `raise` of the project's code, an error on a value of another type, or memory or a C type's
# range on call decides nothing (a contract the tests do not state, a size drawn too large),
# nor does an error on an input holding a drawn iterator or a value of another type (whether
# it is accepted is the differential's question, asked against the original). Otherwise the
# candidates fall into groups of equal answers (iterators inside an answer read, whole floats
# as ints, every error alike): one group, they agree; a group of more than half, every
# candidate outside it is outvoted; else a split (no majority).
# Output per function: {"fn", "calls", "examples", "compared": [k], "outvoted": [{"candidate",
# "inputs", "call", "answer", "majority"}], "split", "split_call", "split_answers": [[k,
# answer]], "note"}.


def _live_function(f, live_fns):
    """The live function object of `f` when no test called it: looked up by its qualname in
    the module of its file (loaded by the tests), through classes' own namespaces."""
    import types

    path = os.path.realpath(os.path.join(ws, f["file"]))
    for mod in list(sys.modules.values()):
        if os.path.realpath(getattr(mod, "__file__", None) or "") != path:
            continue
        obj = mod
        for part in f["qualname"].split("."):
            obj = vars(obj).get(part) if hasattr(obj, "__dict__") else None
            if isinstance(obj, (staticmethod, classmethod)):
                obj = obj.__func__
        return obj if isinstance(obj, types.FunctionType) else None
    return None


def _swaps(version, fns, live_fns, notes):
    """The child's setup for one candidate: each changed function's code and defaults rebuilt
    from the candidate's text of its file (the live object found by a test's call, else by its
    name), and the names its files add at their top level or to a class. None: a function
    does not rebuild (the candidate is not compared)."""
    codes, added = [], []
    for i, f in enumerate(fns):
        live = live_fns[i] or _live_function(f, live_fns)
        text = version.get(f["file"])
        if live is None or text is None:
            continue
        built, scratch = _rebuild(text, f["qualname"], live, notes)
        if built is None:
            return None
        if len(built.__code__.co_freevars) != len(live.__code__.co_freevars):
            notes.append("%s: its closure differs" % f["qualname"])
            return None
        codes.append((live, built.__code__, built.__defaults__, built.__kwdefaults__))
        mod = sys.modules.get(live.__module__)
        if mod is None:
            continue
        for k, v in scratch.items():
            if k.startswith("__"):
                continue
            if not hasattr(mod, k):
                added.append((mod, k, v))
            elif isinstance(v, type) and isinstance(getattr(mod, k), type):
                # A method or attribute the candidate adds to a class the module has.
                live_cls = getattr(mod, k)
                for name, attr in vars(v).items():
                    if not name.startswith("__") and name not in vars(live_cls):
                        added.append((live_cls, name, attr))

    def setup():
        for fn, code, d, kd in codes:
            fn.__code__ = code
            fn.__defaults__ = d
            fn.__kwdefaults__ = kd
        for mod, k, v in added:
            setattr(mod, k, v)
    return setup


def _decides(o):
    """Whether an answer can take part in a vote (see the header)."""
    if o["how"] == "timeout":
        return False
    if o["how"] == "raise" and o.get("error") in ("MemoryError", "OverflowError"):
        return False  # memory or a C type's range on call: the size drawn, not the code
    if o["how"] == "raise" or o.get("lazy_error"):
        return not (o.get("deliberate") or o.get("odd"))
    return True


def _answer(o):
    """What a vote compares: the value returned (an iterator's items), or that it raised —
    which error is not compared (two candidates failing on an input alike are not at odds)."""
    if o["how"] == "raise" or o.get("lazy_error"):
        return ("raise",)
    return (o["how"], o.get("text"))


def consensus():
    import time

    global READ_NESTED
    READ_NESTED = True
    (started, per_call, per_fn, deadline, fns, notes,
     seen, live_fns, rc, runner, recorded) = _start(trim=True)
    import zlib
    given, settings, st, HealthCheck, Phase = _hypothesis()

    setups, compared = [], []
    for k, version in enumerate(cfg["versions"]):
        why = []
        setup = _swaps(version, fns, live_fns, why)
        if setup is None:
            notes.add("candidate %d not compared: %s" % (k + 1, "; ".join(why)))
        else:
            setups.append(setup)
            compared.append(k)
    out = []
    for i, f in enumerate(fns):
        row = {"fn": i, "calls": len(seen[i]), "examples": 0, "compared": compared,
               "outvoted": {}, "split": 0}
        out.append(row)
        if not seen[i]:
            row["note"] = "no test called it"
            continue
        if len(compared) < 2:
            row["note"] = "fewer than two candidates rebuild"
            continue
        WALL_END[0] = deadline
        if _over(float("inf")):
            row["note"] = "no time left"
            continue
        entry = live_fns[i]
        mod = sys.modules.get(entry.__module__)
        keep = {id(v): v for v in vars(mod).values()} if mod else {}
        calls = list(seen[i].values())
        heads = [c[0] for c in calls]
        fn_deadline = _spent() + per_fn  # CPU seconds, as differ's boxes

        def check(t):
            ci, a, kw = t
            if _over(fn_deadline):
                return
            answers = {}
            pairs = list(zip(compared, setups))
            for i in range(0, len(pairs), 2):  # two children at a time
                got = _runs([(entry, heads[ci], a, kw, per_call, setup, None)
                             for _, setup in pairs[i:i + 2]], keep)
                for (k, _), o in zip(pairs[i:i + 2], got):
                    if not _decides(o):
                        return
                    answers[k] = o
            widened = any(isinstance(x, (IterSpec, Odd)) for x in list(a) + list(kw.values()))
            if widened and any(_answer(o) == ("raise",) for o in answers.values()):
                # Whether an iterator or another type is accepted at all is a contract the
                # differential layer judges against the original; here only answers count.
                return
            row["examples"] += 1
            groups = {}
            for k, o in answers.items():
                groups.setdefault(_answer(o), []).append(k)
            if len(groups) < 2:
                return
            text = _call_text(f["qualname"], a, kw)
            big = max(groups.values(), key=len)
            if 2 * len(big) > len(answers):
                for k in answers:
                    if k in big:
                        continue
                    v = row["outvoted"].setdefault(k, {"candidate": k, "inputs": 0})
                    v["inputs"] += 1
                    if "call" not in v or len(text) < len(v["call"]):
                        v.update(call=text, answer=_show_out(answers[k]),
                                 majority=_show_out(answers[big[0]]))
            else:
                row["split"] += 1
                if "split_call" not in row or len(text) < len(row["split_call"]):
                    row["split_call"] = text
                    row["split_answers"] = [[k, _show_out(o)] for k, o in answers.items()]

        # Seeded by the function's name (as differ's draw): the same inputs for every
        # candidate set and every version of this script's text.
        run = _seed()(zlib.crc32(f["qualname"].encode()))(
            settings(max_examples=int(cfg.get("examples", 200)), deadline=None,
                     database=None, suppress_health_check=list(HealthCheck),
                     phases=[Phase.generate])(given(_inputs(st, calls))(check)))
        try:
            run()
        except BaseException as e:  # noqa: B036
            row["note"] = "%s: %s" % (type(e).__name__, str(e)[:120])
    for row in out:
        row["outvoted"] = sorted(row["outvoted"].values(), key=lambda v: v["candidate"])
    emit({"functions": out, "rc": rc, "runner": runner, "notes": sorted(notes),
          "record_s": round(recorded, 2), "total_s": round(time.monotonic() - started, 2),
          "cpu_s": round(_spent(), 2), "asked": ASKED["asked"], "forked": ASKED["forked"]})


HYPOTHESIS_SITE = "/opt/patchloop/hypothesis-site"

# The modes (pl_probe.py's and this file's): the last lines of the script.
try:
    {"cover": cover, "shadow": shadow, "differ": differ, "consensus": consensus}[cfg["mode"]]()
except BaseException as e:  # noqa: B036
    emit({"error": "%s: %s" % (type(e).__name__, str(e)[:300])})
