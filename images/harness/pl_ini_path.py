# patchloop: the directories the project's pytest configuration puts on sys.path
# (`pythonpath`), joined with ":" and made absolute from the checkout root given as argv[1],
# the config file found where pytest looks for it (pytest.ini, .pytest.ini, pyproject.toml's
# [tool.pytest.ini_options] or [tool.pytest], tox.ini's [pytest], setup.cfg's [tool:pytest]).
# A hidden check runs outside that configuration (src/eval/hidden.rs); a project that is not
# installed (tox's skip_install: semver) is found through it.
import configparser, os, sys
try:
    import tomllib
except ImportError:
    tomllib = None
root = sys.argv[1]
def section(path, name):
    c = configparser.ConfigParser(interpolation=None)
    try:
        c.read(path)
    except (configparser.Error, UnicodeDecodeError):
        return None
    return c[name] if c.has_section(name) else None
def found():
    for f in ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"):
        p = os.path.join(root, f)
        if not os.path.isfile(p):
            continue
        if f == "pyproject.toml":
            if tomllib is None:
                continue
            try:
                with open(p, "rb") as h:
                    t = tomllib.load(h).get("tool", {}).get("pytest")
            except (OSError, ValueError):
                continue
            if not isinstance(t, dict):
                continue
            t = t.get("ini_options", t)
            v = t.get("pythonpath", "")
            return v if isinstance(v, list) else str(v).split()
        s = section(p, "tool:pytest" if f == "setup.cfg" else "pytest")
        if s is None and f in ("pytest.ini", ".pytest.ini"):
            return []
        if s is not None:
            return s.get("pythonpath", "").split()
    return []
print(":".join(os.path.normpath(os.path.join(root, d)) for d in found()))
