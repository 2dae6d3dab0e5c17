# B: network egress. Targets are only addresses of this machine (docker0 gateway, a host
# interface, loopback) and listeners the test itself runs; MARKER tags what we send so the
# host-side listeners can prove that nothing from the hardened container arrived.
gw, host_ip, port, uport, marker = sys.argv[1:6]
port, uport = int(port), int(uport)


def tcp(ip):
    s = socket.socket()
    s.settimeout(3)
    s.connect((ip, port))
    s.sendall(f"{marker} tcp {ip}\n".encode())
    s.close()
    return "connected and sent"


def udp(ip, payload):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(3)
    s.sendto(payload, (ip, uport))
    return s.recv(512)


def dns(ip):
    qname = b"".join(bytes([len(p)]) + p for p in [b"probe", marker.lower().encode(), b"test"]) + b"\0"
    r = udp(ip, struct.pack(">HHHHHH", 0x5A17, 0x0100, 1, 0, 0, 0) + qname + struct.pack(">HH", 1, 1))
    if r[:2] != b"\x5a\x17" or not r[2] & 0x80:
        raise RuntimeError(f"bad answer {r[:12]!r}")
    return "answered"


def only_lo():
    ifaces = sorted(os.listdir("/sys/class/net"))
    routes = [l for l in open("/proc/net/route").read().splitlines()[1:] if l.strip()]
    if ifaces != ["lo"] or routes:
        raise RuntimeError(f"ifaces={ifaces} routes={len(routes)}")
    return "only lo, no routes"


def sockets():
    for p in ("/var/run/docker.sock", "/run/docker.sock", "/var/run/containerd/containerd.sock"):
        if os.path.exists(p):
            raise RuntimeError(f"{p} exists")
    found = []
    for root, dirs, files in os.walk("/"):
        if root == "/":
            dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev")]
        for f in files:
            try:
                if stat.S_ISSOCK(os.lstat(os.path.join(root, f)).st_mode):
                    found.append(os.path.join(root, f))
            except OSError:
                pass
    if found:
        raise RuntimeError(f"sockets: {found[:5]}")
    return "no sockets"


op("B1-dns-to-gateway", lambda: dns(gw))
op("B1-only-loopback", only_lo)
op("B2-tcp-gateway", lambda: tcp(gw))
if host_ip != "-":
    op("B2-tcp-host-ip", lambda: tcp(host_ip))
op("B2-udp-gateway", lambda: udp(gw, f"{marker} udp".encode()))
op("B3-host-loopback-service", lambda: tcp("127.0.0.1"))
op("B4-no-sockets", sockets)
op("B7-raw-icmp-socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP).close())
op("B7-packet-socket", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW).close())
