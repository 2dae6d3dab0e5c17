# F: privilege escalation. SUID_ID is a root-owned setuid copy of `id` baked into the test image.
SUID_ID = sys.argv[1]


def as_uid_1000():
    if os.getuid() == 0:
        os.setgroups([])
        os.setgid(1000)
        os.setuid(1000)


def suid_gain():
    p = subprocess.run([SUID_ID, "-u"], preexec_fn=as_uid_1000, capture_output=True, timeout=10)
    euid = p.stdout.decode().strip()
    if euid != "0":
        raise RuntimeError(f"euid stayed {euid!r}")
    return "euid 0"


def mount_tmpfs():
    try:
        return run(["mount", "-t", "tmpfs", "pl", "/mnt"])
    except RuntimeError:
        return run(["unshare", "-Urm", "sh", "-c", "mount -t tmpfs pl /mnt && echo mounted"])


op("F1-setuid-binary", suid_gain)
op("F1-su-root", lambda: run(["su", "-c", "id -u", "root"]))
op("F1-setuid-syscall", lambda: os.setuid(0))
op("F3-unshare-user", lambda: run(["unshare", "-Ur", "true"]))
op("F3-mount", mount_tmpfs)
op("F3-chroot", lambda: in_child(lambda: os.chroot("/tmp")))
op("F-cap-chown", lambda: os.chown("/workspace/calc/__init__.py", 0, 0))
op("F-cap-mknod", lambda: os.mknod(f"/tmp/pl-null-{os.getpid()}", 0o600 | stat.S_IFCHR, os.makedev(1, 3)))
