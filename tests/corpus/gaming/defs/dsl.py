"""The little language the case definitions are written in (see ../gen.py)."""
import textwrap

SOURCES = {
    "toolz": "bench/sources/pytoolz+toolz-b1af8efe191d.tar.gz",
    "boltons": "bench/sources/mahmoud+boltons-8ca3ce22d229.tar.gz",
    "jmespath": "bench/sources/jmespath+jmespath.py-92f31ac81226.tar.gz",
    "texttable": "bench/sources/foutaise+texttable-9d113dca5f78.tar.gz",
    "cachetools": "bench/sources/tkem+cachetools-e048b1d80c1b.tar.gz",
    "inflection": "bench/sources/jpvanhal+inflection-60af09e882f5.tar.gz",
    "xmltodict": "bench/sources/martinblech+xmltodict-e10d3cb4aa70.tar.gz",
    "parse": "bench/sources/r1chardj0n3s+parse-dda6c17b711b.tar.gz",
    "six": "bench/sources/benjaminp+six-f75458270946.tar.gz",
}


def margin(text):
    """Strip the definition file's indentation from a triple-quoted snippet.

    A snippet that ends in a line of spaces (the closing quotes' line) loses exactly that
    many leading spaces per line, so code that is indented in its file keeps its indentation;
    any other snippet is dedented (its first line is at the file's top level).
    """
    head, sep, last = text.rpartition("\n")
    if sep and last and not last.strip():
        n = len(last)
        lines = head.split("\n")
        for line in lines:
            if line.strip() and not line.startswith(" " * n):
                raise ValueError("snippet line left of its margin: %r" % line)
        return "\n".join(line[n:] for line in lines) + "\n"
    return textwrap.dedent(text)


class Sub:
    """Replace the one occurrence of `old` in `path` by `new` (see margin())."""

    def __init__(self, path, old, new):
        self.path = path
        self.old = margin(old)
        self.new = margin(new)

    def apply(self, root):
        import os
        p = os.path.join(root, self.path)
        with open(p, newline="") as f:
            s = f.read()
        old, new = self.placed(s)
        s = ("\n" + s).replace("\n" + old, "\n" + new)[1:]
        with open(p, "w", newline="") as f:
            f.write(s)

    def placed(self, text):
        """(old, new) shifted to the one indentation at which `old` starts a line exactly once.

        Snippets are written at whatever depth reads well in the definition file; both keep
        their relative indentation and move together.
        """
        lines = [l for l in self.old.splitlines() if l.strip()]
        base = min(len(l) - len(l.lstrip(" ")) for l in lines) if lines else 0
        old0 = shift(self.old, -base)
        new0 = shift(self.new, -base)
        anchored = "\n" + text
        hits = [k for k in range(0, 41, 4) if anchored.count("\n" + shift(old0, k)) == 1]
        if len(hits) != 1:
            raise ValueError("%s: %r starts a line at indentations %s (need exactly one)"
                             % (self.path, self.old[:80], hits))
        return shift(old0, hits[0]), shift(new0, hits[0])


def shift(text, k):
    """Indent (k > 0) or dedent (k < 0) every non-blank line by |k| spaces."""
    out = []
    for line in text.split("\n"):
        if not line.strip():
            out.append(line)
        elif k >= 0:
            out.append(" " * k + line)
        else:
            if not line.startswith(" " * -k):
                raise ValueError("cannot dedent %r by %d" % (line, -k))
            out.append(line[-k:])
    return "\n".join(out)


class Add:
    """Create `path` with `text` (dedented)."""

    def __init__(self, path, text):
        self.path = path
        self.text = margin(text)

    def apply(self, root):
        import os
        p = os.path.join(root, self.path)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if os.path.exists(p):
            raise ValueError("%s exists" % self.path)
        with open(p, "w") as f:
            f.write(self.text)


def sub(path, old, new):
    return Sub(path, old, new)


def add(path, text):
    return Add(path, text)


class Bug:
    """A bug and its gold fix: a bench task (`task=` instance id) or edits of our own."""

    def __init__(self, library, task=None, edits=None, gold=None, f2p=None):
        assert (task is None) != (edits is None)
        self.library = library
        self.task = task
        self.edits = edits or []
        self.gold = gold
        self.f2p = f2p  # optional: restrict to these (must all fail on the buggy tree)


class Case:
    def __init__(self, id, bug, cls, kind, patch, wrong_on, check):
        assert kind in ("gaming", "genuine"), kind
        self.id = id
        self.bug = bug
        self.cls = cls
        self.kind = kind
        self.patch = patch
        self.wrong_on = " ".join(wrong_on.split())
        self.check = textwrap.dedent(check).lstrip("\n")
