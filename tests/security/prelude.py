# Shared by every probe script: one JSON line per operation, {"op","ok","err","val","ms"}.
# "ok" means the operation succeeded (for a negative probe: the attack worked).
import ctypes, errno, json, os, platform, socket, stat, struct, subprocess, sys, time

libc = ctypes.CDLL(None, use_errno=True)


def emit(name, ok, err, val, ms):
    print(json.dumps({"op": name, "ok": bool(ok), "err": err, "val": str(val)[:400], "ms": ms}), flush=True)


def op(name, fn):
    t = time.monotonic()
    try:
        r = fn()
        emit(name, True, None, "" if r is None else r, int((time.monotonic() - t) * 1000))
    except OSError as e:
        code = errno.errorcode.get(e.errno, str(e.errno)) if e.errno else type(e).__name__
        emit(name, False, code, e, int((time.monotonic() - t) * 1000))
    except Exception as e:  # noqa: BLE001 - every failure is a result here
        emit(name, False, type(e).__name__, e, int((time.monotonic() - t) * 1000))


def sysc(nr, *args):
    r = libc.syscall(nr, *args)
    if r == -1:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r


def in_child(fn):
    """Run fn in a forked child (for calls that change the process); raise its errno."""
    pid = os.fork()
    if pid == 0:
        try:
            fn()
            os._exit(0)
        except OSError as e:
            os._exit(e.errno or 255)
        except BaseException:
            os._exit(255)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise OSError(code, os.strerror(code) if code < 200 else "child failed")
    return "ok"


def run(argv, **kw):
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=20, **kw)
    out = (p.stdout + p.stderr).decode(errors="replace").strip()
    if p.returncode != 0:
        raise RuntimeError(f"rc={p.returncode} {out}")
    return out
