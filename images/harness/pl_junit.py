# patchloop JUnit runs of Rust, Node and Go test suites. The verifier runs it as
# `python3 -I -B -c <this file>` (nothing the code under test can rewrite is trusted); the agent's
# run_tests runs the copy in /opt/patchloop/harness/. It never imports project code.
#
# Input (JSON on stdin): {"kind": "rust"|"node"|"go", "workspace", "out_dir", "files": [paths]}
#   rust: `cargo test --no-run --message-format=json-render-diagnostics` (the build, and which
#         test binary comes from which source file), then cargo-nextest with a harness-owned
#         config writing JUnit to out_dir (when cargo-nextest is installed), else every test
#         binary with libtest's own JUnit (`-Z unstable-options --format junit`, RUSTC_BOOTSTRAP=1).
#   node: jest from the project's dependencies with the harness-owned jest-junit reporter
#         (/opt/patchloop/node-harness), JUnit to out_dir; `files` narrows the run to those files.
#   go:   `go test -json` (the packages of `files`, else ./...), its events converted here to
#         JUnit: one case per test and subtest, classname = the `_test.go` file declaring the
#         test (from `go list`), so ids read `tests/stats_test.go::TestMedian/even`; a package
#         that does not build reports each of its test functions as an error.
# Output: out_dir/result.json {"kind", "runner", "rc", "problem", "artifacts", "reports"}, the
# test output on stdout/stderr, and one last line `@@PATCHLOOP-JUNIT@@ rc=N result=<sha256>`.
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

MARKER = "@@PATCHLOOP-JUNIT@@"
NEXTEST_CONFIG = """# written by patchloop for one run; the repository's .config/nextest.toml is not read
[profile.patchloop]
fail-fast = false
retries = 0

[profile.patchloop.junit]
path = "%s"
store-success-output = true
store-failure-output = true
"""
JEST_JUNIT = "/opt/patchloop/node-harness/node_modules/jest-junit"


def run(argv, cwd, env, capture=False):
    try:
        p = subprocess.run(argv, cwd=cwd, env=env,
                           stdout=subprocess.PIPE if capture else None)
    except OSError as e:
        return 127, b"", str(e)
    return p.returncode, p.stdout or b"", None


def rust(inp, out, res):
    ws = inp["workspace"]
    env = dict(os.environ, CARGO_TERM_COLOR="never", CARGO_NET_OFFLINE="true")
    env.pop("RUSTC_BOOTSTRAP", None)
    rc, stdout, err = run(["cargo", "test", "--no-run", "--offline",
                           "--message-format=json-render-diagnostics"], ws, env, capture=True)
    for line in stdout.decode("utf-8", "replace").splitlines():
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if d.get("reason") != "compiler-artifact" or not d.get("executable"):
            continue
        if not d.get("profile", {}).get("test"):
            continue
        t = d.get("target", {})
        res["artifacts"].append({
            "package_id": d.get("package_id", ""),
            "kind": t.get("kind", []),
            "name": t.get("name", ""),
            "src_path": t.get("src_path", ""),
            "manifest_path": d.get("manifest_path", ""),
            "executable": d["executable"],
        })
    if rc != 0:
        res["problem"] = err or ("`cargo test --no-run` failed with exit code %d: the crate or "
                                 "its tests do not compile" % rc)
        return rc
    if shutil.which("cargo-nextest"):
        res["runner"] = "nextest"
        junit = os.path.join(out, "junit.xml")
        cfg = os.path.join(out, "nextest.toml")
        with open(cfg, "w") as f:
            f.write(NEXTEST_CONFIG % junit)
        rc, _, err = run(["cargo", "nextest", "run", "--config-file", cfg, "--profile", "patchloop",
                          "--no-fail-fast", "--offline"], ws, env)
        if err:
            res["problem"] = "cargo nextest did not start: %s" % err
        elif os.path.isfile(junit):
            with open(junit, "rb") as f:
                res["reports"].append({"executable": None,
                                       "xml": f.read().decode("utf-8", "replace")})
        return rc
    res["runner"] = "libtest"
    worst = 0
    env_t = dict(env, RUSTC_BOOTSTRAP="1")
    for a in res["artifacts"]:
        cwd = os.path.dirname(a["manifest_path"]) or ws
        rc, stdout, err = run([a["executable"], "-Z", "unstable-options", "--format", "junit"],
                              cwd, dict(env_t, CARGO_MANIFEST_DIR=cwd), capture=True)
        text = stdout.decode("utf-8", "replace")
        # The binary's stdout is its JUnit document; anything a test printed around it stays
        # visible in the run's output.
        m = re.search(r"<\?xml[^>]*\?>\s*<testsuites>.*</testsuites>", text, re.S)
        if m:
            rest = (text[:m.start()] + text[m.end():]).strip()
            res["reports"].append({"executable": a["executable"], "xml": m.group(0)})
        else:
            rest = text.strip()
        if rest:
            sys.stdout.write(rest + "\n")
        print("%s: exit code %d" % (os.path.basename(a["executable"]), rc))
        if rc != 0 and worst == 0:
            worst = rc
    return worst


def node(inp, out, res):
    ws = inp["workspace"]
    res["runner"] = "jest"
    jest = None
    for cand in (os.path.join(ws, "node_modules/jest/bin/jest.js"),
                 "/node_modules/jest/bin/jest.js"):
        if os.path.isfile(cand):
            jest = cand
            break
    if jest is None:
        res["problem"] = ("jest is not installed: add it to package.json's devDependencies "
                          "(patchloop runs Node tests with jest and a JUnit reporter)")
        return 2
    reporter = JEST_JUNIT if os.path.isdir(JEST_JUNIT) else "jest-junit"
    env = dict(os.environ,
               CI="true",
               JEST_JUNIT_OUTPUT_DIR=out,
               JEST_JUNIT_OUTPUT_NAME="junit.xml",
               JEST_JUNIT_CLASSNAME="{filepath}",
               JEST_JUNIT_TITLE="{classname} \u203a {title}",
               JEST_JUNIT_ANCESTOR_SEPARATOR=" \u203a ",
               JEST_JUNIT_REPORT_TEST_SUITE_ERRORS="true")
    argv = ["node", jest, "--ci", "--watchman=false", "--reporters=default",
            "--reporters=" + reporter]
    files = [f for f in inp.get("files", []) if f]
    if files:
        argv.append("--runTestsByPath")
        argv.extend(files)
    rc, _, err = run(argv, ws, env)
    if err:
        res["problem"] = "node did not start: %s" % err
    junit = os.path.join(out, "junit.xml")
    if os.path.isfile(junit):
        with open(junit, "rb") as f:
            res["reports"].append({"executable": None, "xml": f.read().decode("utf-8", "replace")})
    return rc


GO_TEST_FUNC = re.compile(r"^func\s+(Test\w*)\s*\(\s*\w+\s+\*testing\.T\s*\)", re.M)


def _go_packages(ws, env):
    """import path -> (dir relative to ws, {test function: its file relative to ws})."""
    rc, stdout, _ = run(["go", "list", "-e", "-json", "./..."], ws, env, capture=True)
    pkgs = {}
    dec = json.JSONDecoder()
    text = stdout.decode("utf-8", "replace")
    i = 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        try:
            p, i = dec.raw_decode(text, i)
        except ValueError:
            break
        d = p.get("Dir", "")
        rel = os.path.relpath(d, ws) if d else ""
        funcs = {}
        for f in (p.get("TestGoFiles") or []) + (p.get("XTestGoFiles") or []):
            try:
                with open(os.path.join(d, f), encoding="utf-8", errors="replace") as fh:
                    for m in GO_TEST_FUNC.finditer(fh.read()):
                        funcs.setdefault(m.group(1), os.path.normpath(os.path.join(rel, f)))
            except OSError:
                pass
        pkgs[p.get("ImportPath", "")] = (rel, funcs)
    return pkgs


def _xml_attr(s):
    s = "".join(ch for ch in s if ch in "\t\n\r" or ord(ch) >= 32)
    return (s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("\n", "&#10;"))


def _xml_text(s):
    s = "".join(ch for ch in s if ch in "\t\n\r" or ord(ch) >= 32)
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def go(inp, out, res):
    ws = inp["workspace"]
    res["runner"] = "go test -json"
    env = dict(os.environ)
    if not shutil.which("go", path=env.get("PATH")):
        res["problem"] = "go is not installed in this image (prepare it with `--lang go`)"
        return 2
    pkgs = _go_packages(ws, env)
    dirs = sorted({"./" + os.path.dirname(f) if os.path.dirname(f) else "."
                   for f in inp.get("files", []) if f})
    argv = ["go", "test", "-json", "-count=1"] + (dirs or ["./..."])
    try:
        p = subprocess.Popen(argv, cwd=ws, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except OSError as e:
        res["problem"] = "go test did not start: %s" % e
        return 127
    tests = {}  # (package, test) -> {"action", "output", "elapsed"}
    pkg_out = {}
    order = []
    for raw in p.stdout:
        line = raw.decode("utf-8", "replace")
        try:
            ev = json.loads(line)
        except ValueError:
            sys.stdout.write(line)  # build errors are printed as plain text before the events
            pkg_out.setdefault("", []).append(line)
            continue
        pkg, test, action = ev.get("Package", ""), ev.get("Test"), ev.get("Action")
        if action == "output":
            text = ev.get("Output", "")
            sys.stdout.write(text)
            if test:
                tests.setdefault((pkg, test), {"output": []})["output"].append(text)
            else:
                pkg_out.setdefault(pkg, []).append(text)
        elif test and action in ("pass", "fail", "skip"):
            t = tests.setdefault((pkg, test), {"output": []})
            t["action"] = action
            t["elapsed"] = ev.get("Elapsed", 0)
            order.append((pkg, test))
        elif not test and action == "fail":
            pkg_out.setdefault(pkg, []).append("")
            pkg_out[pkg].append("\x00failed")
    rc = p.wait()
    suites = []
    seen = set()
    for pkg, (rel, funcs) in sorted(pkgs.items()):
        cases = []
        for (tp, name) in order:
            if tp != pkg or (tp, name) in seen:
                continue
            seen.add((tp, name))
            t = tests[(tp, name)]
            cls = funcs.get(name.split("/")[0], rel or ".")
            body = "".join(t["output"])
            c = '<testcase classname="%s" name="%s" time="%.3f"' % (
                _xml_attr(cls), _xml_attr(name), float(t.get("elapsed") or 0))
            if t.get("action") == "fail":
                c += '><failure message="%s">%s</failure></testcase>' % (
                    _xml_attr("test failed"), _xml_text(body))
            elif t.get("action") == "skip":
                c += '><skipped message="skipped"/></testcase>'
            else:
                c += "/>"
            cases.append(c)
        ran = any(tp == pkg for (tp, _) in order)
        failed = "\x00failed" in pkg_out.get(pkg, [])
        if not ran and failed:
            # The package (or its tests) did not build: each test function is an error.
            text = "".join(x for x in pkg_out.get(pkg, []) + pkg_out.get("", []) if x != "\x00failed")
            for name, f in sorted(funcs.items()):
                cases.append('<testcase classname="%s" name="%s"><error message="%s">%s</error></testcase>' % (
                    _xml_attr(f), _xml_attr(name), _xml_attr("the package does not build"), _xml_text(text)))
        if cases:
            suites.append('<testsuite name="%s" tests="%d">%s</testsuite>' % (
                _xml_attr(pkg), len(cases), "".join(cases)))
    xml = '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>%s</testsuites>\n' % "".join(suites)
    if suites or rc == 0:
        res["reports"].append({"executable": None, "xml": xml})
    else:
        res["problem"] = "`go test` exited %d without reporting a test" % rc
    return rc


def main():
    sys.stdout.reconfigure(line_buffering=True)
    inp = json.loads(sys.stdin.read() or "{}")
    out = inp["out_dir"]
    os.makedirs(out, mode=0o755, exist_ok=True)  # read by the helper (another uid)
    res = {"kind": inp.get("kind"), "runner": None, "rc": None, "problem": None,
           "artifacts": [], "reports": []}
    fn = {"rust": rust, "node": node, "go": go}.get(inp.get("kind"))
    if fn is None:
        res["problem"] = "unknown project kind %r" % inp.get("kind")
        rc = 2
    else:
        sys.stdout.flush()
        rc = fn(inp, out, res)
    res["rc"] = rc
    if res["problem"]:
        sys.stderr.write("patchloop: %s\n" % res["problem"])
        sys.stderr.flush()
    data = json.dumps(res).encode("utf-8")
    with open(os.path.join(out, "result.json"), "wb") as f:
        f.write(data)
    sys.stdout.flush()
    # The fingerprint lets the verifier see a result file rewritten after this returned.
    print("%s rc=%d result=%s" % (MARKER, rc, hashlib.sha256(data).hexdigest()))
    sys.exit(rc if 0 <= rc < 256 else 1)


main()
