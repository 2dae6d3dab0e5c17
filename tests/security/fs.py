# C: the test directory and the root filesystem are read-only. One target file per operation
# so the control container (where tests/ is writable) can perform every one of them.
import hashlib

os.chdir("/workspace")


def tests_hash():
    h = hashlib.sha256()
    for root, dirs, files in sorted(os.walk("tests")):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(root, f)
            h.update(p.encode() + b"\0" + open(p, "rb").read())
    return h.hexdigest()


before = tests_hash()


def append(p):
    with open(p, "a") as f:
        f.write("# tampered\n")
    return "written"


def create(p):
    with open(p, "w") as f:
        f.write("x = 1\n")
    return "created"


def hardlink():
    try:
        os.link("tests/f_link.txt", "/workspace/hl.txt")  # EXDEV across the mount either way
    except OSError as e:
        if e.errno != errno.EXDEV:
            raise
    os.link("tests/f_link.txt", "tests/f_link2.txt")
    return append("tests/f_link2.txt")


def symlink_write():
    if not os.path.islink("sym.txt"):
        os.symlink("tests/f_sym.txt", "sym.txt")
    return append("sym.txt")


op("C1-append-test-file", lambda: append("tests/test_calc.py"))
op("C1-create-in-tests", lambda: create("tests/test_new.py"))
op("C1-create-conftest", lambda: create("tests/conftest.py"))
op("C1-unlink", lambda: os.unlink("tests/f_unlink.txt"))
op("C1-chmod", lambda: os.chmod("tests/f_chmod.txt", 0o777))
op("C1-utime", lambda: os.utime("tests/f_utime.txt", (0, 0)))
op("C1-truncate", lambda: os.truncate("tests/f_trunc.txt", 0))
op("C1-rename-in-tests", lambda: os.rename("tests/f_rename.txt", "tests/f_renamed.txt"))
op("C1-mkdir-in-tests", lambda: os.mkdir("tests/newdir"))
op("C1-rename-subdir", lambda: os.rename("tests/data", "tests/data2"))
op("C2-hardlink-write", hardlink)
op("C3-symlink-write", symlink_write)
for d in ("/usr", "/etc", "/home", "/", "/opt/patchloop/baseline.git"):
    op(f"C4-write-{d}", lambda d=d: create(os.path.join(d, "pl_probe_write")))
op("C4-baseline-git-config", lambda: append("/opt/patchloop/baseline.git/config"))
after = tests_hash()
def tree_changed():
    if after == before:
        raise RuntimeError("unchanged")
    return "changed"


op("C1-tests-tree-changed", tree_changed)
