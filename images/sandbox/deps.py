"""Install a project's declared dependencies into /opt/venv (the patchloop dependencies layer).

Only the dependency files are present here (no sources), so declarations are read statically:
requirements*.txt, pyproject.toml ([build-system].requires, [project].dependencies, test extras
and dependency groups), setup.cfg (install_requires, tests_require, test extras) and literal
keyword arguments of setup() in setup.py. The build backend is installed too, because the
source layer installs the project editable without network and without build isolation.
Every pip command is printed before it runs; a failure prints `patchloop: FAILED: <command>`.
"""

import ast
import configparser
import os
import re
import subprocess
import sys

TEST_EXTRAS = ("test", "tests", "testing")


def say(msg):
    print("patchloop: " + msg, flush=True)


def pip(args, shown=None):
    cmd = [sys.executable, "-m", "pip", "install", "--no-cache-dir", "--progress-bar", "off"] + args
    shown = "pip install " + (shown or " ".join(args))
    say("running: " + shown)
    if subprocess.call(cmd) != 0:
        say("FAILED: " + shown)
        sys.exit(1)


def is_local(line):
    """A requirement pointing at the project's own tree (installed by the source layer)."""
    s = line
    if s.startswith(("-e ", "--editable ", "--editable=")):
        s = s.split(None, 1)[1] if " " in s else s.split("=", 1)[1]
    s = s.strip()
    return s.startswith((".", "/", "file:")) or s in (".", "")


def requirement_files(project):
    return sorted(f for f in os.listdir(project) if re.fullmatch(r"requirements.*\.txt", f))


def filtered_requirements(project, name):
    """Copy of a requirements file without local paths and without includes we don't have."""
    kept = []
    with open(os.path.join(project, name), encoding="utf-8", errors="replace") as f:
        for raw in f:
            line = raw.split(" #", 1)[0].strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith(("-r ", "-c ", "--requirement", "--constraint")):
                target = re.split(r"[\s=]+", line, 1)[1].strip() if re.search(r"[\s=]", line) else ""
                if not os.path.exists(os.path.join(project, target)):
                    say("skipping %r in %s (only top-level requirements*.txt are available)" % (line, name))
                    continue
                kept.append(line)
                continue
            if is_local(line):
                say("skipping %r in %s (the source layer installs the project itself)" % (line, name))
                continue
            kept.append(line)
    out = os.path.join(project, ".patchloop-" + name)
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(kept) + "\n")
    return out, kept


def normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def from_pyproject(project):
    path = os.path.join(project, "pyproject.toml")
    if not os.path.exists(path):
        return [], [], None, None
    import tomllib

    with open(path, "rb") as f:
        data = tomllib.load(f)
    build = data.get("build-system", {})
    build_reqs = list(build.get("requires", []))
    backend = build.get("build-backend")
    proj = data.get("project", {})
    reqs = list(proj.get("dependencies", []))
    for extra, values in proj.get("optional-dependencies", {}).items():
        if extra.lower() in TEST_EXTRAS:
            reqs += values
    for group, values in data.get("dependency-groups", {}).items():
        if group.lower() in TEST_EXTRAS:
            reqs += [v for v in values if isinstance(v, str)]
    return build_reqs, reqs, backend, proj.get("name")


def split_lines(value):
    return [v.strip() for v in value.splitlines() if v.strip() and not v.strip().startswith("#")]


def from_setup_cfg(project):
    path = os.path.join(project, "setup.cfg")
    if not os.path.exists(path):
        return []
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read(path, encoding="utf-8")
    except configparser.Error as e:
        say("cannot parse setup.cfg (%s); skipping it" % e)
        return []
    reqs = []
    if cfg.has_section("options"):
        for key in ("install_requires", "tests_require"):
            reqs += split_lines(cfg.get("options", key, fallback=""))
    if cfg.has_section("options.extras_require"):
        for extra, value in cfg.items("options.extras_require"):
            if extra.lower() in TEST_EXTRAS:
                reqs += split_lines(value)
    return [r for r in reqs if not r.startswith("file:") and not r.startswith("attr:")]


def from_setup_py(project):
    path = os.path.join(project, "setup.py")
    if not os.path.exists(path):
        return []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            tree = ast.parse(f.read())
    except SyntaxError as e:
        say("cannot parse setup.py (%s); skipping it" % e)
        return []
    reqs = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        if name != "setup":
            continue
        for kw in node.keywords:
            try:
                if kw.arg in ("install_requires", "tests_require"):
                    value = ast.literal_eval(kw.value)
                    reqs += [value] if isinstance(value, str) else list(value)
                elif kw.arg == "extras_require":
                    for extra, values in ast.literal_eval(kw.value).items():
                        if extra.lower() in TEST_EXTRAS:
                            reqs += [values] if isinstance(values, str) else list(values)
            except (ValueError, TypeError, SyntaxError):
                say("setup.py: %s is not a literal; its requirements are not installed" % kw.arg)
    return reqs


def with_setuptools_core(req):
    """setuptools[core]: recent setuptools needs a newer `packaging` than the system one the
    venv sees, and declares it only in its `core` extra."""
    m = re.match(r"\s*setuptools\s*(?=[<>=!~;]|$)", req)
    if m:
        return "setuptools[core]" + req[m.end():]
    return req


def main():
    project = sys.argv[1]
    build_reqs, reqs, backend, name = from_pyproject(project)
    reqs += from_setup_cfg(project)
    reqs += from_setup_py(project)
    if backend and backend.startswith("hatchling"):
        build_reqs.append("editables")
    if (os.path.exists(os.path.join(project, "setup.py")) or os.path.exists(os.path.join(project, "setup.cfg"))) and not build_reqs:
        build_reqs = ["setuptools>=64", "wheel"]

    reqs = [r for r in dict.fromkeys(r.strip() for r in reqs) if r and not is_local(r)]
    if name:
        # Self-references such as "pkg[test]" in a dependency group: the source layer installs it.
        own = normalize(name)
        reqs = [r for r in reqs if normalize(re.split(r"[\s\[<>=!~;@]", r, 1)[0]) != own]
    if build_reqs:
        pip(sorted(dict.fromkeys(with_setuptools_core(r) for r in build_reqs)))
    for req_file in requirement_files(project):
        out, kept = filtered_requirements(project, req_file)
        if kept:
            pip(["-r", out], shown="-r %s (without local paths)" % req_file)
    if reqs:
        pip(reqs)
    if not build_reqs and not reqs and not requirement_files(project):
        say("no declared dependencies")
    say("dependencies installed")


if __name__ == "__main__":
    main()
