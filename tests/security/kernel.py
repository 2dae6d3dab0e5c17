# A2 (kernel view of every process) and A3 (seccomp). A seccomp denial is EPERM; the argument
# values are chosen so the same call that reaches the kernel fails with anything else (EFAULT,
# EINVAL, ESRCH, EBADF) or succeeds: that is the positive control in the unconfined container.
NR = {
    "x86_64": dict(bpf=321, perf_event_open=298, keyctl=250, add_key=248, userfaultfd=323,
                   process_vm_readv=310, setns=308, io_uring_setup=425, ptrace=101),
    "aarch64": dict(bpf=280, perf_event_open=241, keyctl=219, add_key=217, userfaultfd=282,
                    process_vm_readv=270, setns=268, io_uring_setup=425, ptrace=117),
}[platform.machine()]


def every_process():
    bad, n = [], 0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            text = open(f"/proc/{d}/status").read()
        except OSError:
            continue
        f = {k: v.strip() for k, v in (l.split(":", 1) for l in text.splitlines() if ":" in l)}
        n += 1
        caps_zero = all(int(f.get(k, "1"), 16) == 0 for k in ("CapEff", "CapPrm", "CapBnd", "CapAmb"))
        uids = f.get("Uid", "").split()
        good = caps_zero and f.get("NoNewPrivs") == "1" and f.get("Seccomp") == "2" and uids and all(u == "1000" for u in uids)
        if not good:
            bad.append(f"{d}/{f.get('Name')}: CapEff={f.get('CapEff')} NNP={f.get('NoNewPrivs')} Seccomp={f.get('Seccomp')} Uid={uids}")
    if n < 3 or bad:
        raise RuntimeError(f"n={n} bad={bad}")
    return f"n={n} all hardened"


op("A2-every-process", every_process)
op("A3-io_uring_setup", lambda: sysc(NR["io_uring_setup"], 1, None))
op("A3-vsock-socket", lambda: socket.socket(40, socket.SOCK_STREAM).close())
op("A3-bpf", lambda: sysc(NR["bpf"], 9999, None, 0))
op("A3-perf_event_open", lambda: sysc(NR["perf_event_open"], None, 0, -1, -1, 0))
op("A3-keyctl", lambda: sysc(NR["keyctl"], 9999, 0, 0, 0, 0))
op("A3-add_key", lambda: sysc(NR["add_key"], None, None, None, 0, 0))
op("A3-userfaultfd", lambda: os.close(sysc(NR["userfaultfd"], 1 | os.O_CLOEXEC)))
def new_userns():
    if libc.unshare(0x10000000) != 0:  # CLONE_NEWUSER
        raise OSError(ctypes.get_errno(), "unshare")


op("A3-unshare-userns", lambda: in_child(new_userns))
op("A3-ptrace-attach", lambda: sysc(NR["ptrace"], 16, 999999, None, None))
op("A3-process_vm_readv", lambda: sysc(NR["process_vm_readv"], 999999, None, 0, None, 0, 0))
op("A3-setns", lambda: sysc(NR["setns"], -1, 0))


def ia32_getpid():
    """getpid through the 32-bit ABI (int 0x80): the profile lists only native 64-bit
    architectures, so every ia32 entry point (incl. socketcall, moby#53551) must be refused."""
    import mmap

    if platform.machine() != "x86_64":
        raise RuntimeError(f"no ia32 ABI on {platform.machine()}")
    code = bytes([0xB8, 0x14, 0, 0, 0, 0xCD, 0x80, 0xC3])  # mov eax, 20; int 0x80; ret
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        m.write(code)
        fn = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))
        os.write(w, str(fn()).encode())
        os._exit(0)
    os.close(w)
    _, status = os.waitpid(pid, 0)
    out = os.read(r, 100).decode()
    if os.WIFSIGNALED(status):
        raise RuntimeError(f"killed by signal {os.WTERMSIG(status)}")
    if out != str(pid):
        raise RuntimeError(f"int 0x80 getpid returned {out} (child pid {pid})")
    return "32-bit syscall executed"


op("A3-ia32-syscall", ia32_getpid)
# Must work in both: the profile is not overbroad.
op("A3-inet-socket-allowed", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).close())
op("A3-unix-socketpair-allowed", lambda: [s.close() for s in socket.socketpair()])
op("A3-fork-allowed", lambda: in_child(lambda: None))
