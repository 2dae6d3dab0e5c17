#!/usr/bin/env python3
"""Greedy fill-in-the-middle at each one-line bug line of a bench, as the search asks it.

An offline probe of the `infill` format's choices, without the search around it: for every
task whose gold patch changes exactly one line, the (buggy) line is masked with the prompt
window `infill::infill_context` builds (the file's imports, INFILL_ABOVE lines above the
function, the function down to the gap, INFILL_AFTER lines after it), filled greedy, and
then, while the fill departs from the masked line, continued from the masked line's text
through the token where it departed (`infill::continued_start`), up to STEPS times. It
prints one line per task (`whole`, `contN` or `none`) and a summary: how many fills equal
the gold line, and the continuation fills spent.

usage: bench/fim_probe.py TASKS SOURCES [--above N] [--after N] [--steps N] [--url URL]
  e.g. bench/fim_probe.py bench/tasks.jsonl bench/sources --steps 8
  with a server from `scripts/local-model 1.5b 8091` (Qwen2.5-Coder's FIM tokens).
The window is the search's up to where Python's `ast` and the localization may disagree: the
function is the innermost `def` around the line, from its `def` line (decorators aside).
"""
import argparse, ast, collections, json, os, re, sys, tempfile, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rescore import buggy_tree  # the snapshot with the task's bug_patch applied

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("tasks"); ap.add_argument("sources")
ap.add_argument("--above", type=int, default=20); ap.add_argument("--after", type=int, default=6)
ap.add_argument("--steps", type=int, default=2)
ap.add_argument("--url", default="http://127.0.0.1:8091/v1")
ap.add_argument("--model", default="qwen2.5-coder-1.5b")
a = ap.parse_args()
BELOW, HEAD = 5, 12
squeeze = lambda s: "".join(s.split())
work = tempfile.mkdtemp()


def hunks(patch):
    out, path = [], None
    for l in patch.splitlines():
        if l.startswith("+++ b/"): path = l[6:]
        m = re.match(r"@@ -(\d+)", l)
        if m: out.append([path, int(m.group(1)), []])
        elif out and l[:1] in " +-": out[-1][2].append(l)
    return out


def token_starts(code):
    """`infill::token_starts`: words, operator runs, whole strings, single punctuation."""
    cls = lambda c: "w" if c.isalnum() or c == "_" else "o" if c in "=!<>+-*/%&|^~@:" else "x"
    out, prev, i = [], None, 0
    while i < len(code):
        c = code[i]
        if c.isspace(): prev = None; i += 1; continue
        k = cls(c)
        if i > 0 and (prev != k or k == "x"): out.append(i)
        prev = k
        if c in "'\"":
            j = i + 1
            while j < len(code) and code[j] != c: j += 2 if code[j] == "\\" else 1
            i = j + 1; continue
        i += 1
    return out


def continued_start(masked, fill):
    code = masked.lstrip(); indent = masked[: len(masked) - len(code)]; code = code.rstrip()
    rest = iter([c for c in fill.strip() if not c.isspace()]); depart = None
    for i, c in enumerate(code):
        if not c.isspace() and next(rest, None) != c: depart = i; break
    if depart is None: return None
    cuts = [c for c in token_starts(code) if depart < c < len(code)]
    return indent + code[: cuts[0]].rstrip() if cuts else None


def fill(prefix, suffix, middle=""):
    body = {"model": a.model, "prompt": f"<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>{middle}",
            "max_tokens": 80, "stop": ["\n"], "temperature": 0, "seed": 1, "stream": False}
    req = urllib.request.Request(f"{a.url}/completions", json.dumps(body).encode(), {"content-type": "application/json"})
    return middle + json.loads(urllib.request.urlopen(req, timeout=300).read())["choices"][0]["text"]


tally = collections.Counter()
for line in open(a.tasks):
    t = json.loads(line)
    hs = hunks(t["patch"])
    if len(hs) != 1: continue
    path, start, body = hs[0]
    minus = [x for x in body if x[0] == "-"]; plus = [x for x in body if x[0] == "+"]
    if len(minus) != 1 or len(plus) != 1: continue
    src = open(os.path.join(buggy_tree(t, a.sources, work), path)).read()
    lines, ln = src.split("\n"), start
    for x in body:
        if x[0] == "-": break
        if x[0] == " ": ln += 1
    funcs = [(n.lineno, n.end_lineno) for n in ast.walk(ast.parse(src))
             if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.lineno <= ln <= n.end_lineno]
    if not funcs: continue
    f = max(funcs)
    frm = max(1, f[0] - a.above); to = min(len(lines), f[1] + BELOW, ln + a.after)
    imports = [l for l in lines[: frm - 1] if l.startswith(("import ", "from "))][:HEAD]
    prefix = ("\n".join(imports) + "\n# ...\n" if imports else "") + "\n".join(lines[frm - 1 : ln - 1])
    if prefix and not prefix.endswith("\n"): prefix += "\n"
    suffix = "\n".join(lines[ln:to]) + "\n"
    masked, gold = lines[ln - 1], plus[0][1:]
    got, verdict = fill(prefix, suffix), "none"
    tally["tasks"] += 1
    if squeeze(got) == squeeze(gold): verdict = "whole"
    else:
        for step in range(1, a.steps + 1):
            start_text = continued_start(masked, got)
            if start_text is None: break
            tally["continuation fills"] += 1
            got = fill(prefix, suffix, start_text)
            if squeeze(got) == squeeze(gold): verdict = f"cont{step}"; break
    tally["right" if verdict != "none" else "wrong"] += 1
    print(t["instance_id"], verdict, flush=True)
print(json.dumps(dict(tally)))
