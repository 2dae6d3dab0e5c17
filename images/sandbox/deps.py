"""The patchloop dependencies layer of a Python project, in two stages.

  deps.py wheel PROJECT WHEELS   builder image (compilers, Python headers, network): decides what
                                 to install, builds or downloads a wheel of everything into WHEELS
  deps.py install WHEELS         on the base image, without network: installs those wheels into
                                 /opt/venv from WHEELS only (no index), writes
                                 /opt/patchloop/deps.json

What to install (only the dependency files are present, so declarations are read statically):
the build backend (the source layer installs the project editable without network or build
isolation) and the project's runtime dependencies, then the test dependencies, from the first of:
  1./2. what the CI's test job installs (patchloop/ci-deps.json, read by `sandbox::ci_deps`:
        the tox env / nox session it runs, else its `pip install` lines);
  3. extras and dependency groups named test/tests/testing (pyproject.toml, setup.cfg, setup.py);
  4. requirements-test*.txt, test-requirements*.txt, requirements/test*.txt;
  5. a top-level requirements.txt / requirements-dev.txt (nothing narrower exists).
ci-deps.json also carries the repository's `dependencies.add` / `dependencies.skip`.

Degrade, don't die: when the whole set fails, each requirement is retried alone and the ones
that still fail are left out, named in deps.json with pip's last error line. Every pip command is
printed before it runs; a failure that leaves nothing to do prints `patchloop: FAILED: <command>`.
"""

import ast
import configparser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

TEST_NAMES = ("test", "tests", "testing")
# The build backend as CI's build isolation has it (install.sh puts it first on the path).
BUILD_BACKEND = "/opt/patchloop/build-backend"
HERE = os.path.dirname(os.path.abspath(__file__))


def say(msg):
    print("patchloop: " + msg, flush=True)


def normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def req_name(req):
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
    return normalize(m.group(1)) if m else ""


def extras_named(req):
    """The extras a requirement asks for (`pkg[doc, test]; python_version > "3.8"` → doc, test)."""
    m = re.match(r"\s*[A-Za-z0-9][A-Za-z0-9._-]*\s*\[([^\]]*)\]", req)
    return [normalize(e.strip()) for e in m.group(1).split(",") if e.strip()] if m else []


def is_local(line):
    """A requirement pointing at the project's own tree (installed by the source layer)."""
    s = line.strip()
    if s.startswith(("-e ", "--editable ", "--editable=")):
        s = s.split(None, 1)[1] if " " in s else s.split("=", 1)[1]
    s = s.strip()
    return s.startswith((".", "/", "file:")) or s in (".", "")


def pip(verb, args, shown=None):
    """Runs `pip VERB ...`; returns (ok, last error line)."""
    cmd = [sys.executable, "-m", "pip", verb, "--no-cache-dir", "--progress-bar", "off",
           "--disable-pip-version-check"] + args
    shown = "pip %s %s" % (verb, shown or " ".join(args))
    say("running: " + shown)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    last = ""
    for raw in p.stdout:
        line = raw.decode("utf-8", "replace").rstrip()
        print(line, flush=True)
        t = line.strip()
        if re.match(r"(ERROR|error|×)\b", t) or "error:" in t.lower()[:40]:
            last = t
    return p.wait() == 0, last


# ---- what the project declares -------------------------------------------------------------


def read_toml(project):
    path = os.path.join(project, "pyproject.toml")
    if not os.path.exists(path):
        return {}
    import tomllib

    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except (tomllib.TOMLDecodeError, OSError) as e:
        say("cannot parse pyproject.toml (%s); skipping it" % e)
        return {}


def split_lines(value):
    """setup.cfg list values: one requirement a line; a trailing backslash continues it (comment
    lines in between are dropped, as setuptools does)."""
    out, cur = [], ""
    for raw in value.splitlines():
        v = raw.strip()
        if not v or v.startswith("#"):
            continue
        if cur:
            v, cur = cur + " " + v, ""
        if v.endswith("\\"):
            cur = v[:-1].strip()
            continue
        out.append(v)
    if cur:
        out.append(cur)
    return out


def read_setup_cfg(project):
    path = os.path.join(project, "setup.cfg")
    cfg = configparser.ConfigParser(interpolation=None)
    if os.path.exists(path):
        try:
            cfg.read(path, encoding="utf-8")
        except configparser.Error as e:
            say("cannot parse setup.cfg (%s); skipping it" % e)
            return configparser.ConfigParser(interpolation=None)
    return cfg


def _path_of(node, consts):
    """A path an expression spells with constants: "a.txt", NAME, os.path.join(...), a + b,
    an f-string of those; None otherwise."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return consts.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _path_of(node.left, consts), _path_of(node.right, consts)
        return a + b if a is not None and b is not None else None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            p = _path_of(v.value if isinstance(v, ast.FormattedValue) else v, consts)
            if p is None:
                return None
            parts.append(p)
        return "".join(parts)
    if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "join":
        parts = [_path_of(a, consts) for a in node.args]
        if parts and all(p is not None for p in parts):
            return os.path.join(*parts)
    return None


def _read_requirement_file(project, rel):
    root = os.path.abspath(project)
    path = os.path.normpath(os.path.join(root, rel))
    if not path.startswith(root + os.sep) or not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = [re.split(r"(?:^|\s)#", l, 1)[0].strip() for l in f]
    return [l for l in lines if l and not l.startswith("-")]


def _files_read(project, tree, node, consts):
    """Requirements a non-literal setup() value reads from files: a value that is a name is
    followed to its module-level assignment; the requirement files (`*.txt`, `*.in`) named in
    that expression, or by the `with open(...)` around the assignment, are read
    (`TESTS = [l.strip() for l in open("requirements/test.txt")]`, pathvalidate's
    `with open(os.path.join(REQUIREMENT_DIR, "test_requirements.txt")) as f: ...`)."""
    where = [node]
    if isinstance(node, ast.Name):
        for stmt in ast.walk(tree):
            targets = []
            if isinstance(stmt, ast.Assign):
                targets = stmt.targets
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                targets = [stmt.target]
            if any(isinstance(t, ast.Name) and t.id == node.id for t in targets):
                where.append(stmt.value)
                for w in ast.walk(tree):
                    if isinstance(w, ast.With) and stmt in w.body:
                        where.extend(i.context_expr for i in w.items)
    out, found = [], False
    for expr in where:
        for sub in ast.walk(expr):
            rel = _path_of(sub, consts)
            if rel and rel.endswith((".txt", ".in")):
                reqs = _read_requirement_file(project, rel)
                if reqs is not None:
                    found = True
                    out += [r for r in reqs if r not in out]
    return out if found else None


def read_setup_py(project):
    """Keyword arguments of setup(): install_requires, tests_require, extras_require, as
    literals, or read from the requirement files a non-literal value names."""
    path = os.path.join(project, "setup.py")
    out = {"install_requires": [], "tests_require": [], "extras_require": {}}
    if not os.path.exists(path):
        return out
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            tree = ast.parse(f.read())
    except SyntaxError as e:
        say("cannot parse setup.py (%s); skipping it" % e)
        return out
    consts = {}
    for stmt in tree.body:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else (
            stmt.target if isinstance(stmt, ast.AnnAssign) else None)
        if isinstance(target, ast.Name) and stmt.value is not None:
            p = _path_of(stmt.value, consts)
            if p is not None:
                consts[target.id] = p

    def value_of(node, what):
        try:
            return ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError):
            pass
        reqs = _files_read(project, tree, node, consts)
        if reqs is None:
            say("setup.py: %s is not a literal; its requirements are not installed" % what)
        else:
            say("setup.py: %s read from the requirement file it names" % what)
        return reqs

    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        if name != "setup":
            continue
        for kw in node.keywords:
            if kw.arg not in out:
                continue
            if kw.arg == "extras_require" and isinstance(kw.value, ast.Dict):
                for k, v in zip(kw.value.keys, kw.value.values):
                    key = k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None
                    if key is None:
                        continue
                    reqs = value_of(v, "extras_require[%r]" % key)
                    if reqs is not None:
                        out[kw.arg][key] = [reqs] if isinstance(reqs, str) else list(reqs)
                continue
            value = value_of(kw.value, kw.arg)
            if value is None:
                continue
            if kw.arg == "extras_require" and isinstance(value, dict):
                out[kw.arg] = {k: [v] if isinstance(v, str) else list(v) for k, v in value.items()}
            elif kw.arg != "extras_require":
                out[kw.arg] = [value] if isinstance(value, str) else list(value)
    return out


def poetry_req(name, spec):
    """One entry of a poetry dependency table as a PEP 508 requirement: `^1.2` is `>=1.2,<2`,
    `~1.2` is `>=1.2,<1.3`, `1.2` is `==1.2`; a table's `version` and `extras`; a git, path or
    URL source is None (not from an index); several constraints (per Python) or `||` leave the
    version free."""
    extras = []
    if isinstance(spec, list):
        spec = "*"
    if isinstance(spec, dict):
        if any(k in spec for k in ("git", "path", "url", "file")):
            return None
        extras = [e for e in spec.get("extras", []) if isinstance(e, str)]
        spec = spec.get("version", "*")
    req = name + ("[%s]" % ",".join(extras) if extras else "")
    return req + poetry_constraint(str(spec))


def _bump(v, at):
    """`v`'s release numbers up to index `at`, the last one plus one: _bump("1.2.3", 0) = "2"."""
    nums = [int(x) for x in re.match(r"\d+(?:\.\d+)*", v).group(0).split(".")]
    nums = nums[: at + 1] + [0] * (at + 1 - len(nums))
    nums[at] += 1
    return ".".join(str(n) for n in nums)


def poetry_constraint(c):
    c = c.strip()
    if c in ("", "*") or "||" in c:
        return ""
    out = []
    for part in (p.strip() for p in re.split(r",|\s+(?=[<>=!~^])", c)):
        if not part:
            continue
        m = re.match(r"(\^|~(?!=))\s*(\d+(?:\.\d+)*)", part)
        if m:
            v = part[m.start(2):].strip()
            nums = m.group(2).split(".")
            if m.group(1) == "^":
                nonzero = [i for i, x in enumerate(nums) if int(x) != 0]
                at = nonzero[0] if nonzero else len(nums) - 1
            else:
                at = min(1, len(nums) - 1) if len(nums) > 1 else 0
            out += [">=" + v, "<" + _bump(v, at)]
        elif part[0].isdigit():
            out.append("==" + part)
        else:
            out.append(part.replace(" ", ""))
    return ",".join(out)


class Project:
    def __init__(self, path):
        self.path = path
        self.toml = read_toml(path)
        self.cfg = read_setup_cfg(path)
        self.setup_py = read_setup_py(path)
        self.name = self.toml.get("project", {}).get("name") or self.poetry().get("name") or (
            self.cfg.get("metadata", "name", fallback=None) if self.cfg.has_section("metadata") else None)

    def poetry(self):
        return self.toml.get("tool", {}).get("poetry", {})

    def poetry_deps(self, table):
        """A poetry dependency table as PEP 508 requirements (`python` and local ones left out)."""
        out = []
        for name, spec in (table or {}).items():
            if normalize(name) == "python":
                continue
            r = poetry_req(name, spec)
            if r:
                out.append(r)
        return out

    def build_requires(self):
        build = self.toml.get("build-system", {})
        reqs = list(build.get("requires", []))
        if (build.get("build-backend") or "").startswith("hatchling"):
            reqs.append("editables")
        has_setup = any(os.path.exists(os.path.join(self.path, f)) for f in ("setup.py", "setup.cfg"))
        if has_setup and not reqs:
            reqs = ["setuptools>=64", "wheel"]
        # setuptools[core]: recent setuptools needs a newer `packaging` than the system one the
        # venv sees, and declares it only in its `core` extra.
        return [re.sub(r"^\s*setuptools(?=\s*(?:[<>=!~;]|$))", "setuptools[core]", r) for r in reqs]

    def runtime(self):
        reqs = list(self.toml.get("project", {}).get("dependencies", []))
        if self.cfg.has_section("options"):
            reqs += split_lines(self.cfg.get("options", "install_requires", fallback=""))
        reqs += self.setup_py["install_requires"]
        return [r for r in reqs if not r.startswith(("file:", "attr:"))]

    def extras(self):
        """extra name → requirements, from pyproject, setup.cfg and setup.py."""
        out = {}
        for k, v in self.toml.get("project", {}).get("optional-dependencies", {}).items():
            out.setdefault(normalize(k), []).extend(v)
        if self.cfg.has_section("options.extras_require"):
            for k, v in self.cfg.items("options.extras_require"):
                out.setdefault(normalize(k), []).extend(split_lines(v))
        for k, v in self.setup_py["extras_require"].items():
            out.setdefault(normalize(k.split(":")[0]), []).extend(v)
        # poetry's extras name optional packages of its main dependency table.
        poetry = self.poetry()
        main = {normalize(k): v for k, v in poetry.get("dependencies", {}).items()}
        for k, names in poetry.get("extras", {}).items():
            for n in names if isinstance(names, list) else []:
                r = poetry_req(n, main.get(normalize(n), "*"))
                if r:
                    out.setdefault(normalize(k), []).append(r)
        return out

    def group(self, name, seen=()):
        groups = {normalize(k): v for k, v in self.toml.get("dependency-groups", {}).items()}
        # uv's older spelling of the `dev` group.
        legacy = self.toml.get("tool", {}).get("uv", {}).get("dev-dependencies", [])
        if legacy and "dev" not in groups:
            groups["dev"] = legacy
        # poetry's groups (`[tool.poetry.group.NAME.dependencies]`, the older
        # `[tool.poetry.dev-dependencies]` as `dev`), in its own constraint syntax.
        poetry = self.poetry()
        for k, v in poetry.get("group", {}).items():
            if normalize(k) not in groups and isinstance(v, dict):
                groups[normalize(k)] = self.poetry_deps(v.get("dependencies"))
        if poetry.get("dev-dependencies") and "dev" not in groups:
            groups["dev"] = self.poetry_deps(poetry["dev-dependencies"])
        # pdm's dev groups (`[tool.pdm.dev-dependencies]`: PEP 508 strings, `-e` paths local).
        pdm = self.toml.get("tool", {}).get("pdm", {}).get("dev-dependencies", {})
        for k, v in pdm.items() if isinstance(pdm, dict) else ():
            if normalize(k) not in groups and isinstance(v, list):
                groups[normalize(k)] = [r for r in v if isinstance(r, str)]
        out = []
        for item in groups.get(normalize(name), []):
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, dict) and "include-group" in item and item["include-group"] not in seen:
                out += self.group(item["include-group"], seen + (name,))
        return out

    def test_metadata(self):
        """Level 3: test extras, dependency groups and tests_require; (source, requirements)."""
        reqs, named = [], []
        extras = self.extras()
        for n in TEST_NAMES:
            if extras.get(n):
                reqs += extras[n]
                named.append("extra `%s`" % n)
            if self.group(n):
                reqs += self.group(n)
                named.append("dependency group `%s`" % n)
        tr = self.setup_py["tests_require"]
        if self.cfg.has_section("options"):
            tr = tr + split_lines(self.cfg.get("options", "tests_require", fallback=""))
        if tr:
            reqs += tr
            named.append("tests_require")
        return ("the project's " + ", ".join(named)) if named else None, reqs


def find_files(project, patterns):
    found = []
    for pat in patterns:
        d, _, name_re = pat.rpartition("/")
        base = os.path.join(project, d)
        if not os.path.isdir(base):
            continue
        for f in sorted(os.listdir(base)):
            rel = os.path.join(d, f) if d else f
            if re.fullmatch(name_re, f) and os.path.isfile(os.path.join(base, f)) and rel not in found:
                found.append(rel)
    return found


LEVEL4 = [r"requirements[-_]tests?.*\.txt", r"tests?[-_]requirements.*\.txt",
          r"requirements[-_]testing.*\.txt", r"requirements/tests?.*\.txt",
          r"requirements/testing.*\.txt"]
LEVEL5 = [r"requirements\.txt", r"requirements[-_]dev\.txt", r"dev[-_]requirements\.txt"]


# ---- requirement files ---------------------------------------------------------------------


class Reqs:
    """The items to install (one requirement each), pip options and constraint files."""

    def __init__(self, project):
        self.project = project
        self.items = []
        self.options = []
        self.constraints = []

    def add(self, req, origin):
        req = re.sub(r"\s--hash[= ]\S+", "", req).strip()
        if not req or is_local(req):
            if req:
                say("skipping %r from %s (the source layer installs the project itself)" % (req, origin))
            return
        if req.startswith(("-e ", "--editable")):
            req = req.split(None, 1)[1].strip() if " " in req else req.split("=", 1)[1]
        if req not in self.items:
            self.items.append(req)

    def add_file(self, rel, depth=0):
        path = os.path.normpath(os.path.join(self.project, rel))
        if not path.startswith(self.project) or not os.path.isfile(path) or depth > 8:
            say("skipping -r %s (not in the checkout's dependency files)" % rel)
            return
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().replace("\\\n", " ").splitlines()
        here = os.path.dirname(rel)
        for raw in lines:
            line = re.split(r"(?:^|\s)#", raw, 1)[0].strip()
            if not line:
                continue
            m = re.match(r"(-r|--requirement|-c|--constraint)\s*=?\s*(\S+)$", line)
            if m:
                target = os.path.normpath(os.path.join(here, m.group(2)))
                if m.group(1) in ("-r", "--requirement"):
                    self.add_file(target, depth + 1)
                else:
                    self.add_constraint(target)
                continue
            if line.startswith(("--index-url", "-i ", "--extra-index-url", "--find-links", "-f ",
                                "--pre", "--prefer-binary", "--only-binary", "--no-binary")):
                if line not in self.options:
                    self.options.append(line)
                continue
            if line.startswith("-") and not line.startswith(("-e", "--editable")):
                say("ignoring option %r in %s" % (line, rel))
                continue
            self.add(line, rel)

    def add_constraint(self, rel):
        path = os.path.normpath(os.path.join(self.project, rel))
        if path.startswith(self.project) and os.path.isfile(path):
            if path not in self.constraints:
                self.constraints.append(path)
        else:
            say("skipping -c %s (not in the checkout's dependency files)" % rel)

    def add_lock(self, rel):
        """The pins of a uv.lock, poetry.lock or pdm.lock as constraints, as `uv run`/`uv
        sync`, `poetry install` and `pdm install` install them: one `name==version` per
        package from an index (the project itself, git, path and URL sources left out; a
        package the lock pins at two versions, for different Pythons or platforms, is left
        free)."""
        path = os.path.normpath(os.path.join(self.project, rel))
        if not path.startswith(self.project) or not os.path.isfile(path):
            return
        import tomllib

        try:
            with open(path, "rb") as f:
                lock = tomllib.load(f)
        except (tomllib.TOMLDecodeError, OSError) as e:
            say("cannot parse %s (%s); its pins are not followed" % (rel, e))
            return
        pins = {}
        for p in lock.get("package", []):
            src = p.get("source")
            # uv names its registry; poetry.lock gives no source for PyPI and `legacy` for
            # another index.
            from_index = (isinstance(src, dict) and ("registry" in src or src.get("type") == "legacy")) \
                or (src is None and rel.endswith("poetry.lock")) \
                or (rel.endswith("pdm.lock") and not any(k in p for k in ("git", "path", "url")))
            if not from_index or not p.get("version"):
                continue
            pins.setdefault(normalize(p.get("name", "")), set()).add(p["version"])
        lines = ["%s==%s" % (n, v.pop()) for n, v in sorted(pins.items()) if n and len(v) == 1]
        if not lines:
            return
        fd, out = tempfile.mkstemp(prefix="lock-", suffix=".txt")
        with os.fdopen(fd, "w") as f:
            f.write("\n".join(lines) + "\n")
        self.constraints.append(out)
        say("following %s: %d pinned versions as constraints" % (rel, len(lines)))

    def option_args(self):
        out = []
        for o in self.options:
            out += o.replace("=", " ", 1).split() if o.startswith("--") else o.split()
        for c in self.constraints:
            out += ["-c", c]
        return out


def plan(project):
    """(source, build requirements, Reqs) for a project directory."""
    given = given_json()
    proj = Project(project)
    reqs = Reqs(project)
    for r in proj.runtime():
        reqs.add(r, "the project's dependencies")
    ci = given.get("ci") or None
    source = None
    if ci:
        source = ci["source"]
        for r in ci.get("requirements", []):
            reqs.add(r, source)
        for rel in ci.get("files", []):
            reqs.add_file(rel)
        for rel in ci.get("constraints", []):
            reqs.add_constraint(rel)
        for rel in ci.get("locks", []):
            reqs.add_lock(rel)
        extras = proj.extras()
        for e in ci.get("extras", []):
            found = extras.get(normalize(e)) or proj.group(e)
            if not found:
                say("the project declares no extra %r (CI installs it); nothing to add" % e)
            for r in found:
                reqs.add(r, "extra " + e)
    if source is None:
        named, found = proj.test_metadata()
        if named:
            source = named
            for r in found:
                reqs.add(r, named)
    for level, patterns in ((4, LEVEL4), (5, LEVEL5)):
        if source is not None:
            break
        files = find_files(project, patterns)
        if files:
            source = ", ".join(files) + (" (nothing narrower declares the test dependencies)" if level == 5 else "")
            for rel in files:
                reqs.add_file(rel)
    if source is None:
        source = "nothing declares test dependencies: the project's own and pytest"
    for r in given.get("add", []):
        reqs.add(r, "dependencies.add")
    skip = {normalize(s) for s in given.get("skip", [])}
    own = normalize(proj.name) if proj.name else None
    kept = []
    pending = list(reqs.items)
    own_extras = None
    expanded = set()
    while pending:
        r = pending.pop(0)
        n = req_name(r)
        if n in skip:
            say("leaving out %s (dependencies.skip)" % r)
        elif own and n == own:
            # "pkg[doc,test]" in an extra (`all = ["pkg[doc,test]"]`) or a group: the source
            # layer installs the project itself, without those extras; what they require is
            # the tests' too.
            if own_extras is None:
                own_extras = proj.extras()
            for e in extras_named(r):
                if e in expanded:
                    continue
                expanded.add(e)
                found = own_extras.get(e, [])
                if found:
                    say("%s names the project's own extra %r: adding what it requires" % (r, e))
                pending.extend(x for x in found if x not in kept and x not in pending)
        elif r not in kept:
            kept.append(r)
    reqs.items = kept
    build = [r for r in dict.fromkeys(proj.build_requires()) if req_name(r) not in skip]
    return source, build, reqs


def install_set(verb, items, base_args, skipped, what):
    """Installs (or wheels) `items` together; when that fails, each alone. Returns those that
    worked; the others go to `skipped` with pip's last error line."""
    if not items:
        return []
    ok, _ = pip(verb, base_args + items, shown="%s (%d requirements)" % (" ".join(base_args + items)[:300], len(items)))
    if ok:
        return list(items)
    say("%s: installing them together failed; retrying each alone" % what)
    done = []
    for r in items:
        ok, err = pip(verb, base_args + [r])
        if ok:
            done.append(r)
        else:
            say("LEFT OUT: %s (%s)" % (r, err or "pip failed"))
            skipped.append({"requirement": r, "error": err or "pip failed"})
    return done


def given_json():
    try:
        with open(os.path.join(HERE, "ci-deps.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def file_release(filename):
    """(normalized name, version) of a distribution file's name: `docopt_ng-0.9.0.tar.gz`,
    `docopt_ng-0.9.0-py3-none-any.whl`; None for anything else."""
    for ext in (".tar.gz", ".tar.bz2", ".zip", ".whl"):
        if filename.endswith(ext):
            stem = filename[:-len(ext)]
            break
    else:
        return None
    if ext == ".whl":
        parts = stem.split("-")
        return (normalize(parts[0]), parts[1]) if len(parts) >= 5 else None
    name, sep, version = stem.rpartition("-")
    return (normalize(name), version) if sep else None


def release_upload_time(name, version):
    """The first upload time of release `name` `version` on the index (PEP 691/700 JSON:
    `upload-time` of its files), or None with a reason."""
    import urllib.request
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
    url = "%s/%s/" % (index, normalize(name))
    req = urllib.request.Request(url, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            files = json.load(r).get("files", [])
    except Exception as e:  # any failure means: no cut-off, said why
        return None, "cannot read %s (%s)" % (url, e)
    times = sorted(f["upload-time"] for f in files
                   if f.get("upload-time") and file_release(f.get("filename", "")) == (normalize(name), version))
    if not times:
        return None, "the index lists no file of %s %s with an upload time" % (name, version)
    return times[0], None


def cutoff(as_of):
    """The upload-time cut-off `as_of` asks for: a date or datetime as given, or for
    {"release": [name, version]} that release's first upload. (None, why) when there is none."""
    if not as_of:
        return None, None
    if isinstance(as_of, str):
        return as_of, None
    rel = as_of.get("release") if isinstance(as_of, dict) else None
    if isinstance(rel, list) and len(rel) == 2:
        return release_upload_time(rel[0], rel[1])
    return None, "`as_of` is neither a date nor a release: %r" % (as_of,)


def wheel(project, wheels):
    os.makedirs(wheels, exist_ok=True)
    source, build, reqs = plan(project)
    say("test dependencies from: " + source)
    # Resolved as of a date (an old checkout whose lockless requirements today's index
    # answers with releases its suite never ran with): only what was uploaded before it.
    # pip learned the cut-off in 26.0; the builder's own pip is upgraded for it.
    as_of, why = cutoff(given_json().get("as_of"))
    if why:
        say("FAILED: no dependency cut-off: " + why)
        sys.exit(1)
    if as_of:
        ok, err = pip("install", ["--upgrade", "pip>=26"])
        if not ok:
            say("FAILED: pip>=26 (for --uploaded-prior-to) could not be installed: %s" % err)
            sys.exit(1)
        say("resolving as of %s (only what the index had then)" % as_of)
    consts = []
    for i, c in enumerate(reqs.constraints):
        dst = os.path.join(wheels, "constraints-%d.txt" % i)
        shutil.copy(c, dst)
        consts.append(dst)
    reqs.constraints = consts
    args = ["--wheel-dir", wheels] + reqs.option_args()
    skipped = []
    # The build backend stays today's: it builds old projects, and an old one may need what
    # only build isolation installs (pdm-backend 2.0's `editables` for an editable install).
    build_ok = install_set("wheel", build, args, skipped, "build requirements")
    if as_of:
        args += ["--uploaded-prior-to", as_of]
    items_ok = install_set("wheel", reqs.items, args, skipped, "dependencies")
    compiled = compiled_here(wheels)
    with open(os.path.join(wheels, "plan.json"), "w") as f:
        json.dump({"source": source, "build": build_ok, "items": items_ok, "skipped": skipped,
                   "compiled": compiled, "as_of": as_of,
                   "as_of_reason": given_json().get("as_of_reason") if as_of else None,
                   "constraints": [os.path.basename(c) for c in consts]}, f)
    for c in compiled:
        say("compiled from source (no wheel for this Python): " + c)
    say("%d wheels built or downloaded; %d requirements left out"
        % (len([w for w in os.listdir(wheels) if w.endswith(".whl")]), len(skipped)))


def compiled_here(wheels):
    """`name version` of the wheels compiled in this stage: a platform wheel that is not a
    manylinux/musllinux one from an index (pip names a local build `linux_<arch>`)."""
    out = []
    for w in sorted(os.listdir(wheels)):
        parts = w[:-4].split("-") if w.endswith(".whl") else []
        if len(parts) >= 5 and parts[-1].startswith("linux_"):
            out.append("%s %s" % (parts[0], parts[1]))
    return out


def install(wheels):
    with open(os.path.join(wheels, "plan.json")) as f:
        p = json.load(f)
    args = ["--no-index", "--find-links", wheels]
    for c in p.get("constraints", []):
        args += ["-c", os.path.join(wheels, c)]
    skipped = list(p["skipped"])
    installed = install_set("install", p["build"], args, skipped, "build requirements")
    # CI installs into a fresh environment, so a requirement gets the newest version it allows
    # (what `wheel` fetched): never the older copy the base already has (offline, Debian's
    # pytest 7.2 would satisfy `pytest>=6` where CI runs 8.x and reads options 7.2 does not).
    # Eager: the requirements' own dependencies too (hepunits' pint needs a typing_extensions
    # newer than Debian's 4.4, which only-if-needed would keep since it satisfies `pint`'s
    # unversioned requirement).
    installed += install_set("install", p["items"],
                             args + ["--upgrade", "--upgrade-strategy", "eager"], skipped,
                             "dependencies")
    # CI builds the project in an isolated environment with the newest backend its
    # `[build-system] requires` allows (the venv's own may be older: a PEP 639 license string
    # needs setuptools 77); the install layer builds with this copy first (install.sh).
    if p["build"]:
        ok, err = pip("install", ["--no-index", "--find-links", wheels, "--upgrade",
                                  "--target", BUILD_BACKEND] + p["build"])
        if not ok:
            say("the isolated build backend could not be installed (%s); the install layer "
                "builds with the environment's own" % (err or "pip failed"))
            shutil.rmtree(BUILD_BACKEND, ignore_errors=True)
    os.makedirs("/opt/patchloop", exist_ok=True)
    with open("/opt/patchloop/deps.json", "w") as f:
        json.dump({"source": p["source"], "installed": installed, "skipped": skipped,
                   "compiled": p.get("compiled", []), "as_of": p.get("as_of"),
                   "as_of_reason": p.get("as_of_reason")}, f)
    if not p["build"] and not p["items"]:
        say("no declared dependencies")
    say("dependencies installed (%d requirements, %d left out)" % (len(installed), len(skipped)))


def main():
    if sys.argv[1:2] == ["wheel"] and len(sys.argv) == 4:
        wheel(sys.argv[2], sys.argv[3])
    elif sys.argv[1:2] == ["install"] and len(sys.argv) == 3:
        install(sys.argv[2])
    else:
        say("FAILED: usage: deps.py wheel PROJECT WHEELS | deps.py install WHEELS")
        sys.exit(2)


if __name__ == "__main__":
    main()
