# patchloop JUnit runs of Rust and Node test suites. The verifier runs it as
# `python3 -I -B -c <this file>` (nothing the code under test can rewrite is trusted); the agent's
# run_tests runs the copy in /opt/patchloop/harness/. It never imports project code.
#
# Input (JSON on stdin): {"kind": "rust"|"node", "workspace", "out_dir", "files": [paths]}
#   rust: `cargo test --no-run --message-format=json-render-diagnostics` (the build, and which
#         test binary comes from which source file), then cargo-nextest with a harness-owned
#         config writing JUnit to out_dir (when cargo-nextest is installed), else every test
#         binary with libtest's own JUnit (`-Z unstable-options --format junit`, RUSTC_BOOTSTRAP=1).
#   node: jest from the project's dependencies with the harness-owned jest-junit reporter
#         (/opt/patchloop/node-harness), JUnit to out_dir; `files` narrows the run to those files.
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


def main():
    sys.stdout.reconfigure(line_buffering=True)
    inp = json.loads(sys.stdin.read() or "{}")
    out = inp["out_dir"]
    os.makedirs(out, mode=0o755, exist_ok=True)  # read by the helper (another uid)
    res = {"kind": inp.get("kind"), "runner": None, "rc": None, "problem": None,
           "artifacts": [], "reports": []}
    fn = {"rust": rust, "node": node}.get(inp.get("kind"))
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
