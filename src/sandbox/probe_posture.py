# Posture probes run inside a sandbox container by `patchloop doctor` and before episodes.
# Prints one JSON object per probe: {"probe": name, "ok": bool, "observed": str}.
# "ok" means the sandbox held (the dangerous thing was refused / the flag is set).
import ctypes, errno, json, os, socket

libc = ctypes.CDLL(None, use_errno=True)


def emit(name, ok, observed):
    print(json.dumps({"probe": name, "ok": bool(ok), "observed": str(observed)}), flush=True)


status = dict(
    line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line
)
emit("cap_eff_zero", int(status["CapEff"].strip(), 16) == 0, status["CapEff"].strip())
emit("cap_bnd_zero", int(status["CapBnd"].strip(), 16) == 0, status["CapBnd"].strip())
emit("no_new_privs", status.get("NoNewPrivs", "").strip() == "1", status.get("NoNewPrivs", "").strip())
emit("seccomp_filter", status.get("Seccomp", "").strip() == "2", status.get("Seccomp", "").strip())
emit("uid_1000", os.getuid() == 1000, os.getuid())

r = libc.syscall(425, 1, ctypes.c_void_p(0))  # io_uring_setup(1, NULL)
e = ctypes.get_errno()
emit("io_uring_denied", r == -1 and e == errno.EPERM, f"rc={r} errno={errno.errorcode.get(e, e)}")

try:
    socket.socket(40, socket.SOCK_STREAM).close()  # AF_VSOCK
    emit("vsock_denied", False, "socket created")
except OSError as ex:
    emit("vsock_denied", ex.errno in (errno.EPERM, errno.EACCES), errno.errorcode.get(ex.errno, ex.errno))

try:
    socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
    emit("inet_socket_allowed", True, "created")  # the profile must not be overbroad
except OSError as ex:
    emit("inet_socket_allowed", False, ex)

r = libc.unshare(0x10000000)  # CLONE_NEWUSER
e = ctypes.get_errno()
emit("userns_denied", r == -1, f"rc={r} errno={errno.errorcode.get(e, e)}")

ifaces = sorted(os.listdir("/sys/class/net")) if os.path.isdir("/sys/class/net") else []
emit("only_loopback", ifaces in ([], ["lo"]), ",".join(ifaces))

try:
    open("/pl_probe_root_write", "w").close()
    emit("root_read_only", False, "wrote /pl_probe_root_write")
except OSError as ex:
    emit("root_read_only", ex.errno == errno.EROFS, errno.errorcode.get(ex.errno, ex.errno))
