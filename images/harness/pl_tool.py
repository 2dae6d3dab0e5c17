# patchloop verification helpers, run as `python3 -I -c <this file> COMMAND` in a fresh
# interpreter that never imports project code. Input is JSON on stdin, output JSON on stdout.
#   ini        -> {"ini_text", "source", "pythonpath": [abs], "testpaths": [...]}
#                 the pre-patch pytest configuration as a harness-owned [pytest] ini
#   snapshot   {"workspace", "tests_dirs"} -> {path: sha256} of test files and code/config
#   collect    {"out_dir", "workspace", "tests_dirs"} -> {"junit": text|null, "guard": text|null,
#              "junit_sha256", "guard_sha256", "result": text|null (pl_junit.py's), "result_sha256", "snapshot"}
#   setup      {"workspace", "tests_dirs", "names"} -> {"ini", "found"}
#   put        {"workspace", "files": {relpath: hex}} -> {"written": [...]}
#   find_spec  {"names": [...]} -> {name: bool}  (run on the unpatched tree, cwd /)
#   sources    {"workspace", "paths": [...]} -> {path: text|null}  (regular files only, no
#              symlinks followed: the semantic patch analysis reads pre/post-patch sources)
#   serve      a long-lived read-only helper (run as another uid than the code under test, with
#              -S): one {"cmd": "snapshot"|"collect", "input": {...}} line in, one
#              {"ok": result} or {"error": text} line out, until stdin closes.
import configparser
import hashlib
import importlib.util
import json
import os
import shlex
import stat
import sys

LINELIST = {
    "testpaths", "python_files", "python_classes", "python_functions", "markers",
    "filterwarnings", "norecursedirs", "usefixtures", "required_plugins", "pythonpath",
    "doctest_optionflags",
}
DROP = {"cache_dir", "junit_family", "junit_logging", "junit_suite_name", "junit_duration_report",
        "junit_log_passing_tests"}


def _ini_value(key, v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        if key == "addopts":
            return " ".join(shlex.quote(str(x)) for x in v)
        return "\n" + "\n".join("    " + str(x) for x in v)
    return str(v)


def find_config(ws):
    """pytest's own discovery order for a rootdir (7.x): first match wins."""
    for name in ("pytest.ini", ".pytest.ini"):
        p = os.path.join(ws, name)
        if os.path.isfile(p):
            cp = configparser.RawConfigParser(strict=False)
            cp.read(p)
            return name, dict(cp["pytest"]) if cp.has_section("pytest") else {}
    p = os.path.join(ws, "pyproject.toml")
    if os.path.isfile(p):
        try:
            try:
                import tomllib
            except ImportError:  # Python < 3.11: pip vendors a compatible parser
                try:
                    import tomli as tomllib
                except ImportError:
                    from pip._vendor import tomli as tomllib
            with open(p, "rb") as f:
                data = tomllib.load(f)
            opts = data.get("tool", {}).get("pytest", {}).get("ini_options")
            if opts is not None:
                return "pyproject.toml", {k: _ini_value(k, v) for k, v in opts.items()}
        except Exception:
            pass
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        p = os.path.join(ws, name)
        if os.path.isfile(p):
            cp = configparser.RawConfigParser(strict=False)
            try:
                cp.read(p)
            except configparser.Error:
                continue
            if cp.has_section(section):
                return name, dict(cp[section])
    return None, {}


def cmd_ini(inp):
    ws = inp.get("workspace", "/workspace")
    source, opts = find_config(ws)
    pythonpath = [
        os.path.normpath(os.path.join(ws, p))
        for p in opts.pop("pythonpath", "").split()
    ]
    testpaths = opts.get("testpaths", "").split()
    lines = ["[pytest]"]
    for k, v in opts.items():
        if k in DROP:
            continue
        v = str(v)
        if "\n" in v.strip("\n") or (k in LINELIST and v.startswith("\n")):
            body = "\n".join("    " + x.strip() for x in v.strip("\n").splitlines() if x.strip())
            lines.append("%s =\n%s" % (k, body))
        else:
            lines.append("%s = %s" % (k, v.strip()))
    return {"ini_text": "\n".join(lines) + "\n", "source": source, "pythonpath": pythonpath,
            "testpaths": testpaths}


SNAP_EXT = (".py", ".pth", ".ini", ".cfg", ".toml", ".pyc")


def cmd_snapshot(inp):
    # Optional (Rust/Node runs): "exts" adds file endings, "prune_top" skips top-level
    # directories (cargo's target/).
    ws = inp["workspace"]
    tests = [d.strip("/") + "/" for d in inp.get("tests_dirs", []) if d.strip("/")]
    exts = SNAP_EXT + tuple(inp.get("exts", []))
    prune_top = set(inp.get("prune_top", []))
    out = {}
    for root, dirs, files in os.walk(ws):
        dirs[:] = [d for d in dirs if d != ".git" and not (root == ws and d in prune_top)]
        for name in files:
            full = os.path.join(root, name)
            rel = os.path.relpath(full, ws)
            if not (name.endswith(exts) or any(rel.startswith(t) for t in tests)):
                continue
            try:
                if os.path.islink(full):
                    digest = "symlink:" + os.readlink(full)
                else:
                    data = _read_regular(full)
                    digest = hashlib.sha256(data).hexdigest() if data is not None else "special file"
                    if data is not None and name.endswith(".pyc") and _compiled_from_source(full, data):
                        digest = "compiled from its source"
            except OSError as e:
                digest = "unreadable: %s" % e
            out[rel] = digest
    return out


def _compiled_from_source(pyc, data):
    """Whether a `__pycache__/M.cpython-XY.pyc` is derived data of `M.py` beside it: its code
    is what compiling the source gives, or the import system would not use it for that source
    (a stale timestamp or source hash). A test's subprocess that ignores PYTHONDONTWRITEBYTECODE
    (`python -I`) writes such files again after a patch. A .pyc Python would load in place of
    its source with other code (a crafted one) stays a file whose change counts. Never raises;
    an unreadable or malformed .pyc is not derived."""
    try:
        import importlib.util
        import marshal
        if os.path.basename(os.path.dirname(pyc)) != "__pycache__" or data[:4] != importlib.util.MAGIC_NUMBER:
            return False
        module = os.path.basename(pyc).split(".")[0]
        src = os.path.join(os.path.dirname(os.path.dirname(pyc)), module + ".py")
        if os.path.islink(src):
            return False
        text = _read_regular(src)
        if text is None:
            return False
        flags = int.from_bytes(data[4:8], "little")
        if flags == 0:
            st = os.stat(src)
            used = (data[8:12] == (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
                    and data[12:16] == (st.st_size & 0xFFFFFFFF).to_bytes(4, "little"))
        elif flags & 2:
            used = data[8:16] == importlib.util.source_hash(text)
        else:
            used = True
        if not used:
            return True
        return marshal.loads(data[16:]) == compile(text, src, "exec", dont_inherit=True)
    except Exception:
        return False


def _read_regular(path):
    # Never blocks on a FIFO or device planted by the code under test: None for non-files.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                return b"".join(chunks)
            chunks.append(b)
    finally:
        os.close(fd)


def _read(path):
    try:
        data = _read_regular(path)
    except OSError:
        return None, "-"
    if data is None:
        return None, "-"
    return data.decode("utf-8", errors="replace"), hashlib.sha256(data).hexdigest()


def cmd_collect(inp):
    d = inp["out_dir"]
    junit, junit_sha = _read(os.path.join(d, "junit.xml"))
    guard, guard_sha = _read(os.path.join(d, "guard.json"))
    result, result_sha = _read(os.path.join(d, "result.json"))
    return {"junit": junit, "guard": guard, "junit_sha256": junit_sha, "guard_sha256": guard_sha,
            "result": result, "result_sha256": result_sha, "snapshot": cmd_snapshot(inp)}


def cmd_sources(inp):
    ws = inp["workspace"]
    out = {}
    for rel in inp["paths"]:
        text, _ = _read(os.path.join(ws, rel))
        out[rel] = text
    return out


def cmd_setup(inp):
    # One exec instead of two: the pre-patch config and which new module names already
    # resolve (the baseline snapshot comes from the read-only helper). find_spec runs last
    # because it changes directory.
    return {"ini": cmd_ini(inp), "found": cmd_find_spec(inp)}


def cmd_put(inp):
    ws = os.path.realpath(inp["workspace"])
    written = []
    for rel, data in sorted(inp["files"].items()):
        full = os.path.realpath(os.path.join(ws, rel))
        if not full.startswith(ws + os.sep):
            raise SystemExit("refusing to write outside the workspace: %r" % rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(bytes.fromhex(data))
        written.append(rel)
    return {"written": written}


def cmd_find_spec(inp):
    os.chdir("/")
    out = {}
    for n in inp["names"]:
        try:
            out[n] = importlib.util.find_spec(n) is not None
        except Exception:
            out[n] = True
    return out


def serve():
    # Read-only commands only: this process must never write where the code under test reads.
    cmds = {"snapshot": cmd_snapshot, "collect": cmd_collect, "sources": cmd_sources}
    for line in sys.stdin:
        try:
            req = json.loads(line)
            out = {"ok": cmds[req["cmd"]](req["input"])}
        except Exception as e:  # the harness falls back to a fresh exec
            out = {"error": "%s: %s" % (type(e).__name__, e)}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


def main():
    if sys.argv[1] == "serve":
        serve()
        return
    inp = json.loads(sys.stdin.read() or "{}")
    fn = {"ini": cmd_ini, "snapshot": cmd_snapshot, "collect": cmd_collect, "put": cmd_put,
          "find_spec": cmd_find_spec, "setup": cmd_setup, "sources": cmd_sources}[sys.argv[1]]
    json.dump(fn(inp), sys.stdout)


main()
