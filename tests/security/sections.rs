//! Sections A (kernel view, seccomp), B (network), C (filesystem), D (resources), F
//! (privileges) and G (canary secrets).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, UdpSocket};

use patchloop::sandbox::container::Container;
use patchloop::sandbox::policy::ContainerPolicy;
use patchloop::sandbox::{ExecRequest, ExecStatus, Sandbox};

use crate::common::{self, SUID_ID};
use crate::probes::{Ctx, Op, Outcome, compare, refused, remove, run_py, survivors};

const KERNEL: &str = include_str!("kernel.py");
const NET: &str = include_str!("net.py");
const FS: &str = include_str!("fs.py");
const PRIV: &str = include_str!("priv.py");

const SECCOMP_DENIED: &[&str] = &[
    "A3-io_uring_setup",
    "A3-vsock-socket",
    "A3-bpf",
    "A3-perf_event_open",
    "A3-keyctl",
    "A3-add_key",
    "A3-userfaultfd",
    "A3-unshare-userns",
    "A3-ptrace-attach",
    "A3-process_vm_readv",
    "A3-setns",
];
const SECCOMP_ALLOWED: &[&str] = &[
    "A3-inet-socket-allowed",
    "A3-unix-socketpair-allowed",
    "A3-fork-allowed",
];

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// A, B, F and G share one hardened container and its control twin (none of them writes
/// anything the others read).
pub async fn shared_pair(ctx: &Ctx) -> Vec<Outcome> {
    let policy = common::hardened_policy();
    let control_policy = policy.control();
    let (h, c) = tokio::join!(
        ctx.hardened(&policy, "shared"),
        ctx.control(&control_policy, "control")
    );
    let mut out = Vec::new();
    out.extend(kernel(&h, &c, &policy).await);
    out.extend(network(ctx, &h, &c).await);
    out.extend(privileges(&h, &c).await);
    out.extend(canaries(ctx, &h, &c).await);
    tokio::join!(remove(h), remove(c));
    out
}

async fn kernel(h: &Container, c: &Container, policy: &ContainerPolicy) -> Vec<Outcome> {
    let ((_, hk), (_, ck)) = tokio::join!(run_py(h, KERNEL, &[]), run_py(c, KERNEL, &[]));
    let mut out = vec![compare("A2-every-process", &hk, &ck, |o| o.ok, |o| !o.ok)];
    for id in SECCOMP_DENIED {
        // Denied by the profile: EPERM. In the unconfined control the call reaches the kernel.
        out.push(compare(
            id,
            &hk,
            &ck,
            |o| o.failed_with(&["EPERM"]),
            |o| o.ok || o.err.as_deref() != Some("EPERM"),
        ));
    }
    // The 32-bit ABI: refused in any way (errno or a kill) here, executed in the control.
    out.push(compare("A3-ia32-syscall", &hk, &ck, |o| !o.ok, |o| o.ok));
    for id in SECCOMP_ALLOWED {
        out.push(compare(id, &hk, &ck, |o| o.ok, |o| o.ok));
    }

    // The kernel's own view of the limits (cgroup files and rlimits), not the flags we passed.
    let view = "cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max; \
                cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max; \
                ulimit -n; ulimit -f; id -u";
    let (hv, cv) = tokio::join!(common::sh(h, view, secs(20)), common::sh(c, view, secs(20)));
    let want = format!(
        "{}\n{}\n{}\n{}\n",
        policy.pids_limit,
        policy.memory_bytes,
        policy.nofile,
        policy.fsize_bytes / 1024
    );
    let (ht, ct) = (hv.output.render(), cv.output.render());
    out.push(Outcome::new(
        "A2-cgroup-and-rlimits",
        ht == format!("{want}1000\n"),
        format!("{ht:?} want {want:?}+uid 1000"),
        ct == format!("{want}0\n"),
        format!("control (same limits, root) read {ct:?}"),
    ));

    // A2 cgroup namespace: the container's own cgroup is its root; the host's path (and the
    // container's full id in it) stays hidden, also on cgroup v1 where Docker defaults to host.
    let own = "cat /proc/self/cgroup";
    let (hc, cc) = tokio::join!(common::sh(h, own, secs(20)), common::sh(c, own, secs(20)));
    let (ht, ct) = (hc.output.render(), cc.output.render());
    let rooted = |t: &str| {
        t.lines().filter(|l| !l.trim().is_empty()).count() > 0
            && t.lines()
                .filter(|l| !l.trim().is_empty())
                .all(|l| l.rsplit(':').next() == Some("/"))
    };
    out.push(Outcome::new(
        "A2-cgroupns-private",
        hc.status == ExecStatus::Exited(0) && rooted(&ht),
        common::truncate(ht.trim(), 200),
        !rooted(&ct),
        format!(
            "the control (host cgroupns) sees host paths: {}",
            common::truncate(ct.trim(), 120)
        ),
    ));
    out
}

/// Host-side listeners on every local address: they record what arrives, so the probe can
/// check that nothing tagged by the hardened container ever did.
struct Listeners {
    port: u16,
    uport: u16,
    seen: Arc<Mutex<Vec<u8>>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

async fn listeners() -> Listeners {
    let tcp = TcpListener::bind("0.0.0.0:0")
        .await
        .expect("bind a TCP listener");
    let udp = UdpSocket::bind("0.0.0.0:0")
        .await
        .expect("bind a UDP listener");
    let port = tcp.local_addr().expect("tcp addr").port();
    let uport = udp.local_addr().expect("udp addr").port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s1 = seen.clone();
    let t1 = tokio::spawn(async move {
        while let Ok((mut sock, _)) = tcp.accept().await {
            let s = s1.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                if let Ok(Ok(n)) = tokio::time::timeout(secs(3), sock.read(&mut buf)).await {
                    s.lock().expect("seen lock").extend_from_slice(&buf[..n]);
                }
            });
        }
    });
    let s2 = seen.clone();
    let t2 = tokio::spawn(async move {
        let mut buf = vec![0u8; 2048];
        while let Ok((n, from)) = udp.recv_from(&mut buf).await {
            s2.lock().expect("seen lock").extend_from_slice(&buf[..n]);
            // Answer like a DNS server would: same id, QR bit set, the rest echoed.
            let mut reply = buf[..n].to_vec();
            if reply.len() >= 4 {
                reply[2] = 0x81;
                reply[3] = 0x80;
            }
            let _ = udp.send_to(&reply, from).await;
        }
    });
    Listeners {
        port,
        uport,
        seen,
        tasks: vec![t1, t2],
    }
}

async fn network(ctx: &Ctx, h: &Container, c: &Container) -> Vec<Outcome> {
    let (gw, host_ip) = common::local_targets(&ctx.docker).await;
    let l = listeners().await;
    let nonce: u32 = rand::random();
    let (hm, cm) = (format!("H-{nonce:08x}"), format!("C-{nonce:08x}"));
    // The B4 control: a socket the finder must find.
    common::sh(
        c,
        "python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\"/tmp/pl-ctl.sock\")'",
        secs(20),
    )
    .await;
    let hip = host_ip.clone().unwrap_or_else(|| "-".into());
    let (port, uport) = (l.port.to_string(), l.uport.to_string());
    let (h_args, c_args) = (
        [gw.as_str(), &hip, &port, &uport, &hm],
        [gw.as_str(), &hip, &port, &uport, &cm],
    );
    let ((_, hn), (_, cn)) = tokio::join!(run_py(h, NET, &h_args), run_py(c, NET, &c_args));
    // Loopback: the container's lo is its own. Control: the host service is really up there.
    let host_side = tokio::time::timeout(
        secs(2),
        tokio::net::TcpStream::connect(("127.0.0.1", l.port)),
    )
    .await
    .is_ok_and(|r| r.is_ok());
    common::pause(300).await;
    let seen = String::from_utf8_lossy(&l.seen.lock().expect("seen lock")).into_owned();
    for t in &l.tasks {
        t.abort();
    }

    let unreachable = |o: &Op| o.failed_with(&["ENETUNREACH", "EHOSTUNREACH"]) && o.ms <= 100;
    let mut out = vec![
        compare("B1-dns-to-gateway", &hn, &cn, unreachable, |o| o.ok),
        compare("B1-only-loopback", &hn, &cn, |o| o.ok, |o| !o.ok),
        compare("B2-tcp-gateway", &hn, &cn, unreachable, |o| o.ok),
        compare("B2-udp-gateway", &hn, &cn, unreachable, |o| o.ok),
        compare(
            "B4-no-sockets",
            &hn,
            &cn,
            |o| o.ok,
            |o| !o.ok && o.val.contains("/tmp/pl-ctl.sock"),
        ),
        refused("B7-raw-icmp-socket", &hn, &cn, &["EPERM"]),
        refused("B7-packet-socket", &hn, &cn, &["EPERM"]),
    ];
    match &host_ip {
        Some(_) => out.push(compare("B2-tcp-host-ip", &hn, &cn, unreachable, |o| o.ok)),
        None => out.push(Outcome::new(
            "B2-tcp-host-ip",
            false,
            "no host interface address found in /proc/net/fib_trie",
            false,
            "-",
        )),
    }
    let lo = hn.get("B3-host-loopback-service");
    out.push(Outcome::new(
        "B3-host-loopback-service",
        lo.is_some_and(|o| o.failed_with(&["ECONNREFUSED"])),
        lo.map(Op::describe).unwrap_or_default(),
        host_side,
        format!("host-side connect to 127.0.0.1:{} ok={host_side}", l.port),
    ));
    // Nothing tagged by the hardened container arrived anywhere; the control's traffic did.
    let control_arrived = seen.contains(&format!("{cm} tcp {gw}"))
        && seen.contains(&format!("{cm} udp"))
        && host_ip
            .as_ref()
            .is_none_or(|ip| seen.contains(&format!("{cm} tcp {ip}")));
    out.push(Outcome::new(
        "B2-nothing-arrived-at-host-listeners",
        !seen.contains(&hm),
        format!("listeners saw {} bytes", seen.len()),
        control_arrived,
        format!("control traffic seen: {}", common::truncate(&seen, 300)),
    ));
    out
}

async fn privileges(h: &Container, c: &Container) -> Vec<Outcome> {
    let ((_, hp), (_, cp)) = tokio::join!(run_py(h, PRIV, &[SUID_ID]), run_py(c, PRIV, &[SUID_ID]));
    let any_failure = |o: &Op| !o.ok;
    vec![
        compare("F1-setuid-binary", &hp, &cp, any_failure, |o| o.ok),
        compare("F1-su-root", &hp, &cp, any_failure, |o| o.ok),
        refused("F1-setuid-syscall", &hp, &cp, &["EPERM"]),
        compare("F3-unshare-user", &hp, &cp, any_failure, |o| o.ok),
        compare("F3-mount", &hp, &cp, any_failure, |o| o.ok),
        refused("F3-chroot", &hp, &cp, &["EPERM"]),
        refused("F-cap-chown", &hp, &cp, &["EPERM"]),
        refused("F-cap-mknod", &hp, &cp, &["EPERM"]),
    ]
}

/// Scans env, every /proc/*/environ and every readable file for any `PL_CANARY_` value. The
/// prefix is assembled at run time so the scan never matches its own command line.
const CANARY_SCAN: &str = r#"P="PL_CANA""RY_"
env | grep -q "$P" && echo "HIT env"
for f in /proc/[0-9]*/environ; do grep -qa "$P" "$f" 2>/dev/null && echo "HIT environ $f"; done
grep -rIal --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev "$P" / 2>/dev/null | head -5 | sed 's/^/HIT file /'
echo SCAN-DONE
"#;

async fn canaries(ctx: &Ctx, h: &Container, c: &Container) -> Vec<Outcome> {
    let canary = ctx.canaries.vars[0].1.clone();
    // Control: put a canary where each scan looks (exec env, a file); each scan must find it.
    common::exec(
        c,
        ExecRequest::shell("printf '%s' \"$GITHUB_TOKEN\" > /tmp/leak.txt")
            .env(format!("GITHUB_TOKEN={canary}")),
    )
    .await;
    let (hr, cr) = tokio::join!(
        common::exec(h, ExecRequest::shell(CANARY_SCAN).timeout(secs(120))),
        common::exec(
            c,
            ExecRequest::shell(format!("sleep 30 & {CANARY_SCAN}"))
                .env(format!("GITHUB_TOKEN={canary}"))
                .timeout(secs(120))
        )
    );
    let (ht, ct) = (hr.output.render(), cr.output.render());
    let done = ht.contains("SCAN-DONE");
    let mut out = Vec::new();
    for (id, hit) in [
        ("G-env", "HIT env"),
        ("G-proc-environ", "HIT environ"),
        ("G-readable-files", "HIT file"),
    ] {
        out.push(Outcome::new(
            id,
            done && !ht.contains(hit),
            common::truncate(&ht, 400),
            ct.contains(hit),
            common::truncate(&ct, 400),
        ));
    }
    // docker inspect: every hardened container is checked by A1 (env/labels/cmd, the whole
    // JSON); the control here is a container whose policy carries a canary on purpose.
    let mut leaky = common::hardened_policy().control();
    leaky.env.push(format!("GH_TOKEN={canary}"));
    let lc = common::start(&ctx.docker, &ctx.image, &leaky, &ctx.run, "leaky-control").await;
    let li = common::inspect(&ctx.docker, lc.name()).await;
    let hi = common::inspect(&ctx.docker, h.name()).await;
    let hj = serde_json::to_string(&hi).unwrap_or_default();
    let lj = serde_json::to_string(&li).unwrap_or_default();
    out.push(Outcome::new(
        "G-docker-inspect",
        !hj.is_empty() && ctx.canaries.found_in(&hj).is_none(),
        format!("{:?}", ctx.canaries.found_in(&hj)),
        ctx.canaries.found_in(&lj).is_some(),
        "a canary in a control policy's env is visible in docker inspect",
    ));
    remove(lc).await;
    out
}

/// C: the read-only test directory and root filesystem, against a control where tests/ is rw.
pub async fn filesystem(ctx: &Ctx) -> Vec<Outcome> {
    let policy = common::hardened_policy();
    let control_policy = policy.control();
    let (h, c) = tokio::join!(
        ctx.hardened(&policy, "fs"),
        ctx.control(&control_policy, "fs-control")
    );
    let ((_, hf), (_, cf)) = tokio::join!(run_py(&h, FS, &[]), run_py(&c, FS, &[]));
    let mut out = Vec::new();
    for id in [
        "C1-append-test-file",
        "C1-create-in-tests",
        "C1-create-conftest",
        "C1-unlink",
        "C1-chmod",
        "C1-utime",
        "C1-truncate",
        "C1-rename-in-tests",
        "C1-mkdir-in-tests",
        "C1-rename-subdir",
        "C2-hardlink-write",
        "C3-symlink-write",
    ] {
        out.push(refused(id, &hf, &cf, &["EROFS"]));
    }
    for d in ["/usr", "/etc", "/home", "/", "/opt/patchloop/baseline.git"] {
        out.push(refused(
            &format!("C4-write-{d}"),
            &hf,
            &cf,
            &["EROFS", "EACCES"],
        ));
    }
    out.push(refused(
        "C4-baseline-git-config",
        &hf,
        &cf,
        &["EROFS", "EACCES"],
    ));
    out.push(compare(
        "C1-tests-tree-changed",
        &hf,
        &cf,
        |o| !o.ok,
        |o| o.ok,
    ));
    tokio::join!(remove(h), remove(c));
    out
}

/// D1: pids limit and a fork bomb; the next step works and nothing of the bomb survives.
pub async fn pids(ctx: &Ctx) -> Vec<Outcome> {
    let policy = ContainerPolicy {
        pids_limit: 64,
        ..common::hardened_policy()
    };
    let control_policy = ContainerPolicy {
        pids_limit: 1024,
        ..policy.control()
    };
    let (h, c) = tokio::join!(
        ctx.hardened(&policy, "pids"),
        ctx.control(&control_policy, "pids-control")
    );
    let spawn = "import subprocess, errno\nps = []\nerr = None\nfor i in range(200):\n    try:\n        ps.append(subprocess.Popen(['sleep', '987661']))\n    except OSError as e:\n        err = errno.errorcode.get(e.errno)\n        break\nprint(f'spawned={len(ps)} err={err}')\n";
    let (hs, cs) = tokio::join!(
        common::exec(
            &h,
            ExecRequest::argv(["python3", "-c", spawn]).timeout(secs(60))
        ),
        common::exec(
            &c,
            ExecRequest::argv(["python3", "-c", spawn]).timeout(secs(60))
        )
    );
    let (hst, cst) = (hs.output.render(), cs.output.render());
    let spawned = |t: &str| {
        t.lines()
            .find_map(|l| l.strip_prefix("spawned="))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|n| n.parse::<i64>().ok())
            .unwrap_or(-1)
    };
    let mut out = vec![Outcome::new(
        "D1-pids-limit",
        (0..policy.pids_limit).contains(&spawned(&hst)) && hst.contains("err=EAGAIN"),
        hst.trim().to_string(),
        spawned(&cst) == 200,
        cst.trim().to_string(),
    )];
    remove(c).await;

    let bomb = common::exec(
        &h,
        ExecRequest::argv(["bash", "-c", ":(){ :|:& };:"]).timeout(secs(5)),
    )
    .await;
    let t = Instant::now();
    let next = common::sh(
        &h,
        "cat /sys/fs/cgroup/pids/pids.events 2>/dev/null || cat /sys/fs/cgroup/pids.events; echo alive",
        secs(20),
    )
    .await;
    let next_text = next.output.render();
    let (bomb_left, bomb_ps) = survivors(&h, ":|:&").await;
    let max_hits = next_text
        .lines()
        .find_map(|l| l.strip_prefix("max "))
        .and_then(|n| n.trim().parse::<u64>().ok())
        .unwrap_or(0);
    out.push(Outcome::new(
        "D1-fork-bomb-contained",
        next.status.success() && next_text.contains("alive") && bomb_left == 0,
        format!(
            "bomb {:?}; next step {:?} in {:?}: {}; survivors: {}",
            bomb.status,
            next.status,
            t.elapsed(),
            next_text.trim(),
            common::truncate(&bomb_ps, 300)
        ),
        max_hits > 0,
        format!("pids.events max={max_hits} (the bomb really hit the limit)"),
    ));

    // D1b repeated bombs: every step after one still runs, through the step loop (its cleanup
    // freezes the bomb before killing it, and waits until the pids are free again).
    let mut rounds = Vec::new();
    for _ in 0..5 {
        let b = common::exec(
            &h,
            ExecRequest::argv(["bash", "-c", ":(){ :|:& };:"]).timeout(secs(5)),
        )
        .await;
        let n = common::sh(&h, "echo alive", secs(20)).await;
        rounds.push((b.status, n.output.render().contains("alive")));
    }
    out.push(Outcome::new(
        "D1-fork-bombs-repeated",
        rounds.iter().all(|(_, alive)| *alive) && h.uses_step_loop(),
        format!(
            "rounds (bomb status, next step alive): {rounds:?}; step loop in use: {}",
            h.uses_step_loop()
        ),
        max_hits > 0,
        "the first bomb hit the pids limit",
    ));
    remove(h).await;
    out
}

/// D2 memory bomb, D3 tmpfs fill, D10 tmpfs inodes, D5 huge file, D6 fd exhaustion.
pub async fn memory_and_files(ctx: &Ctx) -> Vec<Outcome> {
    let policy = ContainerPolicy {
        memory_bytes: 128 << 20,
        tmp_bytes: 32 << 20,
        tmp_inodes: 2000,
        fsize_bytes: 48 << 20,
        nofile: 256,
        ..common::hardened_policy()
    };
    let h = ctx.hardened(&policy, "mem").await;
    let mut out = Vec::new();

    // D2. Controls first: memory below the limit works; a plain SIGKILL (137) is not an OOM.
    let small = common::sh(
        &h,
        "python3 -c 'b = bytearray(48 << 20); print(len(b))'",
        secs(30),
    )
    .await;
    let killed = common::sh(&h, "kill -9 $$", secs(30)).await;
    let bomb = common::sh(
        &h,
        "python3 -c '\nb = []\nwhile True:\n    b.append(bytearray(8 << 20))\n'",
        secs(60),
    )
    .await;
    let after = common::sh(&h, "echo alive", secs(20)).await;
    out.push(Outcome::new(
        "D2-memory-bomb-is-oom",
        bomb.status == ExecStatus::Oom && after.output.render().trim() == "alive",
        format!("bomb {:?}; next step {:?}", bomb.status, after.status),
        small.status.success() && killed.status == ExecStatus::Exited(137),
        format!(
            "48 MiB alloc {:?}; kill -9 $$ {:?} (not Oom)",
            small.status, killed.status
        ),
    ));

    // D3. A full tmpfs is ENOSPC at size=, not an OOM kill (G5).
    let fill = common::sh(
        &h,
        "dd if=/dev/zero of=/tmp/fill bs=1M count=64 2>&1; echo rc=$?; rm -f /tmp/fill",
        secs(60),
    )
    .await;
    let below = common::sh(
        &h,
        "dd if=/dev/zero of=/tmp/fill bs=1M count=8 2>&1; echo rc=$?; rm -f /tmp/fill",
        secs(60),
    )
    .await;
    let ft = fill.output.render();
    out.push(Outcome::new(
        "D3-tmpfs-fill-enospc",
        fill.status == ExecStatus::Exited(0) && ft.contains("No space left") && ft.contains("rc=1"),
        format!("{:?}: {}", fill.status, ft.trim()),
        below.output.render().contains("rc=0"),
        "8 MiB below size= written",
    ));

    // D10. Inode exhaustion on the tmpfs: ENOSPC at nr_inodes.
    let inodes = "import os, errno\nos.makedirs('/tmp/ino', exist_ok=True)\nn = 0\nerr = None\nwhile n < 100000:\n    try:\n        open(f'/tmp/ino/{n}', 'w').close()\n        n += 1\n    except OSError as e:\n        err = errno.errorcode.get(e.errno)\n        break\nprint(f'files={n} err={err}')\n";
    let ino = common::exec(
        &h,
        ExecRequest::argv(["python3", "-c", inodes]).timeout(secs(60)),
    )
    .await;
    let it = ino.output.render();
    common::sh(&h, "rm -rf /tmp/ino", secs(30)).await;
    let files = it
        .lines()
        .find_map(|l| l.strip_prefix("files="))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse::<i64>().ok())
        .unwrap_or(-1);
    out.push(Outcome::new(
        "D10-tmpfs-inodes",
        it.contains("err=ENOSPC") && files <= policy.tmp_inodes,
        it.trim().to_string(),
        files >= 100,
        format!("{files} files created before the limit"),
    ));

    // D5. One huge file: SIGXFSZ at the fsize ulimit (exit 128+25).
    let big = common::sh(
        &h,
        "dd if=/dev/zero of=/workspace/big bs=1M count=100 2>/dev/null",
        secs(60),
    )
    .await;
    let size = common::sh(
        &h,
        "stat -c %s /workspace/big; rm -f /workspace/big",
        secs(20),
    )
    .await;
    let sz: i64 = size.output.render().trim().parse().unwrap_or(-1);
    let ok8 = common::sh(
        &h,
        "dd if=/dev/zero of=/workspace/ok bs=1M count=8 2>/dev/null; echo rc=$?; rm -f /workspace/ok",
        secs(60),
    )
    .await;
    out.push(Outcome::new(
        "D5-huge-file-sigxfsz",
        big.status == ExecStatus::Exited(153) && (0..=policy.fsize_bytes).contains(&sz),
        format!("{:?}, file size {sz}", big.status),
        ok8.output.render().contains("rc=0"),
        "8 MiB file below the limit written",
    ));
    let falloc = common::sh(
        &h,
        "fallocate -l 10G /workspace/huge 2>&1; echo rc=$?; stat -c size=%s /workspace/huge 2>/dev/null; rm -f /workspace/huge",
        secs(30),
    )
    .await;
    let small_falloc = common::sh(
        &h,
        "fallocate -l 1M /workspace/small; echo rc=$?; rm -f /workspace/small",
        secs(30),
    )
    .await;
    let fa = falloc.output.render();
    out.push(Outcome::new(
        "D4-fallocate-10G-refused",
        !fa.contains("rc=0") && !fa.contains(&format!("size={}", 10u64 << 30)),
        format!("{:?}: {}", falloc.status, fa.trim()),
        small_falloc.output.render().contains("rc=0"),
        "fallocate 1M works",
    ));

    // D6. fd exhaustion: EMFILE at nofile.
    let fds = "import errno\nfs = []\nerr = None\nwhile len(fs) < 100000:\n    try:\n        fs.append(open('/dev/null'))\n    except OSError as e:\n        err = errno.errorcode.get(e.errno)\n        break\nprint(f'fds={len(fs)} err={err}')\n";
    let fd = common::exec(
        &h,
        ExecRequest::argv(["python3", "-c", fds]).timeout(secs(30)),
    )
    .await;
    let ft = fd.output.render();
    let n = ft
        .lines()
        .find_map(|l| l.strip_prefix("fds="))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse::<i64>().ok())
        .unwrap_or(-1);
    out.push(Outcome::new(
        "D6-fd-exhaustion-emfile",
        ft.contains("err=EMFILE") && n < policy.nofile,
        ft.trim().to_string(),
        n >= 100,
        format!("{n} fds opened before the limit"),
    ));
    remove(h).await;
    out
}

/// D8 output floods (capped, head+tail marker, harness memory bounded) and D9 log flood.
pub async fn output_flood(ctx: &Ctx) -> Vec<Outcome> {
    let policy = common::hardened_policy();
    let h = ctx.hardened(&policy, "flood").await;
    let cap = 64 * 1024;
    let mut out = Vec::new();
    let small = common::exec(
        &h,
        ExecRequest::shell("printf 'hello\\nworld\\n'").output_cap(cap),
    )
    .await;
    let small_ok = small.output.render() == "hello\nworld\n" && !small.output.is_truncated();

    let rss0 = common::rss_bytes();
    let mut flood_seen = true;
    let mut most_read = 0u64;
    for (id, cmd, head) in [
        ("D8-flood-lines", "yes | head -c 1000000000", "y\ny"),
        (
            "D8-flood-one-line",
            "head -c 100000000 /dev/zero | tr '\\0' a",
            "aaaa",
        ),
        ("D8-flood-invalid-utf8", "head -c 3000000 /dev/urandom", ""),
        (
            "D8-flood-ansi-cr",
            "yes $'\\r\\033[2J\\033[31m' | head -c 5000000",
            "\r\u{1b}[2J",
        ),
    ] {
        let t = Instant::now();
        let r = common::exec(
            &h,
            ExecRequest::shell(cmd).output_cap(cap).timeout(secs(60)),
        )
        .await;
        let text = r.output.render();
        flood_seen &= r.output.total_bytes() >= 2_000_000;
        most_read = most_read.max(r.output.total_bytes());
        out.push(Outcome::new(
            id,
            r.output.is_truncated()
                && text.contains("output truncated")
                && r.output.kept_bytes().len() <= cap
                // Lossy rendering turns each invalid byte into a 3-byte U+FFFD.
                && text.len() <= 3 * cap + 512
                && text.starts_with(head)
                // Well before the exec's own 60 s timeout: the harness stopped the flood, the
                // timeout did not. (30 s was crossed at 33 s with the load average at 9 on 2
                // cores; the deterministic bound is D8-harness-stops-reading-floods below.)
                && t.elapsed() < secs(50),
            format!(
                "{:?} in {:?}: {} bytes seen, {} rendered",
                r.status,
                t.elapsed(),
                r.output.total_bytes(),
                text.len()
            ),
            small_ok,
            "small output returned intact, no marker",
        ));
    }
    // Head and tail both survive, with the marker between them.
    let r = common::exec(
        &h,
        ExecRequest::shell("echo HEAD-MARK; yes | head -c 3000000; echo; echo TAIL-MARK")
            .output_cap(cap)
            .timeout(secs(60)),
    )
    .await;
    let text = r.output.render();
    let marker = text.find("output truncated").unwrap_or(0);
    out.push(Outcome::new(
        "D8-head-and-tail-kept",
        text.starts_with("HEAD-MARK\n") && marker > 0 && text[marker..].contains("TAIL-MARK"),
        format!(
            "{:?}: {} bytes rendered, marker at {marker}",
            r.status,
            text.len()
        ),
        r.output.total_bytes() > 3_000_000,
        "3 MB went through the harness",
    ));
    // The process-wide RSS is only reported: every other section runs concurrently in this
    // process, and allocator high-water marks made it swing by 200 MB between runs. The bound
    // that matters is deterministic: the harness stops reading a flood (1 GB offered).
    let grown = common::rss_bytes().saturating_sub(rss0);
    eprintln!("(D8: harness RSS grew {} KiB over the floods)", grown >> 10);
    out.push(Outcome::new(
        "D8-harness-stops-reading-floods",
        most_read < 64 << 20,
        format!(
            "the largest flood read was {} KiB of up to 1 GB offered",
            most_read >> 10
        ),
        flood_seen,
        "every flood pushed >= 2 MB through the harness",
    ));

    // D9: PID 1's stdout is the container log; the json-file log is capped by max-size.
    // (Under the step loop it is also the attached stream the harness reads steps from.)
    let before = log_size(ctx, &h).await;
    let flood = common::sh(
        &h,
        "head -c 8000000 /dev/zero | tr '\\0' x | fold -w 1000 > /proc/1/fd/1; echo rc=$?",
        secs(60),
    )
    .await;
    let (after, flood_logged) = log_scan(ctx, &h).await;
    out.push(Outcome::new(
        "D9-log-flood-capped",
        after <= (1 << 20) + (64 << 10),
        format!("kept log {before} -> {after} bytes after writing 8 MB to PID 1's stdout"),
        // With the step loop, PID 1's stdout is also the step's own output stream, where the
        // harness stops reading at the flood limit; the flood must reach the log either way
        // (its size may shrink: the log rotates at max-size).
        flood_logged,
        format!(
            "the flood reached the log ({before} -> {after} bytes): {}",
            common::truncate(flood.output.render().trim(), 120)
        ),
    ));
    remove(h).await;
    out
}

/// Bytes the daemon keeps of the container's log, read through the Engine API (works where
/// the daemon's filesystem is not ours to read).
async fn log_size(ctx: &Ctx, c: &Container) -> u64 {
    log_scan(ctx, c).await.0
}

/// (bytes the daemon keeps of the log, whether they hold a line of the D9 flood).
async fn log_scan(ctx: &Ctx, c: &Container) -> (u64, bool) {
    use bollard::query_parameters::LogsOptions;
    use futures_util::StreamExt;
    let mut stream = ctx.docker.logs(
        c.name(),
        Some(LogsOptions {
            stdout: true,
            stderr: true,
            ..Default::default()
        }),
    );
    let flood_line = "x".repeat(1000);
    let (mut n, mut seen) = (0u64, false);
    while let Some(item) = stream.next().await {
        match item {
            Ok(chunk) => {
                let bytes = chunk.into_bytes();
                n += bytes.len() as u64;
                seen |= String::from_utf8_lossy(&bytes).contains(&flood_line);
            }
            Err(e) => panic!("reading the log of {}: {e}", c.name()),
        }
    }
    (n, seen)
}

/// D4 workspace fill and D10 workspace inodes: the workspace is a sized tmpfs (G4), so many
/// files below the fsize limit stop at the quota instead of filling the host's disk, and the
/// step is classified `QuotaExceeded`. The control is the same probe on a disk-backed
/// workspace (no quota), which must write it all.
pub async fn workspace_quota(ctx: &Ctx) -> Vec<Outcome> {
    const QUOTA: i64 = 32 << 20;
    const INODES: i64 = 2000;
    let policy = ContainerPolicy {
        memory_bytes: 256 << 20,
        tmp_bytes: 32 << 20,
        workspace_bytes: QUOTA,
        workspace_inodes: INODES,
        ..common::hardened_policy()
    };
    let control_policy = ContainerPolicy {
        workspace_bytes: 0,
        ..policy.control()
    };
    let h = ctx.hardened(&policy, "quota").await;
    let c = ctx.control(&control_policy, "quota-ctl").await;
    let mut out = Vec::new();

    // 24 files of 4 MiB (each far below fsize): 96 MiB into a 32 MiB quota.
    let fill = "i=0; while [ $i -lt 24 ]; do dd if=/dev/zero of=/workspace/fill$i bs=1M count=4 2>&1 || break; i=$((i+1)); done; echo files=$i; du -sk /workspace/ | cut -f1 | sed 's/^/kib=/'";
    let host_before = host_free_bytes();
    let hf = common::sh(&h, fill, secs(120)).await;
    let host_after = host_free_bytes();
    let fstype = common::sh(&h, "stat -f -c %T /workspace", secs(20)).await;
    common::sh(&h, "rm -f /workspace/fill*", secs(30)).await;
    let alive = common::sh(
        &h,
        "echo alive > /workspace/after && cat /workspace/after",
        secs(20),
    )
    .await;
    let cf = common::sh(&c, fill, secs(120)).await;
    common::sh(&c, "rm -f /workspace/fill*", secs(30)).await;
    let kib = |t: &str| {
        t.lines()
            .find_map(|l| l.strip_prefix("kib="))
            .and_then(|n| n.trim().parse::<i64>().ok())
            .unwrap_or(-1)
    };
    let (ht, ct) = (hf.output.render(), cf.output.render());
    let written = kib(&ht) << 10;
    let drop = host_before
        .zip(host_after)
        .map(|(b, a)| b as i64 - a as i64);
    out.push(Outcome::new(
        "D4-workspace-quota-many-files",
        hf.status == ExecStatus::QuotaExceeded
            && h.workspace_full()
            // du also counts directory blocks and the image's own files: docs/security.md D4 allows
            // the quota plus 1 MiB.
            && (0..=QUOTA + (1 << 20)).contains(&written)
            && fstype.output.render().trim() == "tmpfs"
            && alive.output.render().trim() == "alive",
        format!(
            "{:?}; {written} bytes written of a {QUOTA}-byte quota; workspace fs {}; next step {:?}; host free space change during the fill {drop:?} bytes",
            hf.status,
            fstype.output.render().trim(),
            alive.output.render().trim()
        ),
        ct.contains("files=24") && kib(&ct) >= 96 << 10,
        format!("disk-backed workspace: {}", ct.lines().rev().take(2).collect::<Vec<_>>().join(" ")),
    ));

    // D10. Inode exhaustion in the workspace: ENOSPC at nr_inodes, not the host's inodes.
    let inodes = "import os, errno\nos.makedirs('/workspace/ino', exist_ok=True)\nn = 0\nerr = None\nwhile n < 5000:\n    try:\n        open(f'/workspace/ino/{n}', 'w').close()\n        n += 1\n    except OSError as e:\n        err = errno.errorcode.get(e.errno)\n        break\nprint(f'files={n} err={err}')\n";
    let count = |t: &str| {
        t.lines()
            .find_map(|l| l.strip_prefix("files="))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|n| n.parse::<i64>().ok())
            .unwrap_or(-1)
    };
    let hi = common::exec(
        &h,
        ExecRequest::argv(["python3", "-c", inodes]).timeout(secs(60)),
    )
    .await;
    let ci = common::exec(
        &c,
        ExecRequest::argv(["python3", "-c", inodes]).timeout(secs(60)),
    )
    .await;
    let (hit, cit) = (hi.output.render(), ci.output.render());
    out.push(Outcome::new(
        "D10-workspace-inodes",
        hit.contains("err=ENOSPC") && count(&hit) <= INODES,
        format!("{:?}: {}", hi.status, hit.trim()),
        count(&cit) == 5000,
        format!("disk-backed workspace: {}", cit.trim()),
    ));
    remove(h).await;
    remove(c).await;
    out
}

/// Free bytes of the filesystem holding Docker's data (the host disk a workspace would fill).
fn host_free_bytes() -> Option<u64> {
    let out = std::process::Command::new("df")
        .args(["-Pk", "/var/lib/docker"])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let avail: u64 = text
        .lines()
        .nth(1)?
        .split_whitespace()
        .nth(3)?
        .parse()
        .ok()?;
    Some(avail << 10)
}

/// E10: the verifier's read-only helper (another uid) is out of reach of a step: it cannot be
/// killed, stopped or traced, its fds (the answer channel) cannot be opened, and it still
/// answers afterwards. Control: the same kill works on a process of the step's own uid.
pub async fn helper_isolation(ctx: &Ctx) -> Vec<Outcome> {
    let h = ctx.hardened(&common::hardened_policy(), "helper").await;
    let argv: Vec<String> = ["sh", "-c", "while read -r l; do echo \"$l\"; done"]
        .into_iter()
        .map(String::from)
        .collect();
    let first = h.helper_call(&argv, "ping", secs(20)).await;
    let attack = "for d in /proc/[0-9]*; do p=${d#/proc/}; [ \"$(stat -c %u $d)\" = 65534 ] || continue; echo helper=$p; kill -STOP $p 2>/dev/null && echo stopped; kill -9 $p 2>/dev/null && echo killed; ls $d/fd/ >/dev/null 2>&1 && echo fds-listed; echo x > $d/fd/1 2>/dev/null && echo wrote; cat $d/environ >/dev/null 2>&1 && echo environ; done; sleep 100 & kill -9 $! && echo own-killed";
    let r = common::sh(&h, attack, secs(30)).await;
    let t = r.output.render();
    let second = h.helper_call(&argv, "still-there", secs(20)).await;
    let answer = |a: &Option<Result<String, _>>| match a {
        Some(Ok(s)) => s.clone(),
        other => format!("{other:?}"),
    };
    let (a1, a2) = (answer(&first), answer(&second));
    let reached = ["stopped", "killed", "fds-listed", "wrote", "environ"]
        .iter()
        .any(|w| t.lines().any(|l| l.trim() == *w));
    out_one(
        Outcome::new(
            "E10-helper-out-of-reach",
            t.contains("helper=") && !reached && a2 == "still-there",
            format!(
                "step saw: {}; helper answered {a1:?} then {a2:?}",
                t.trim().replace('\n', " ")
            ),
            t.contains("own-killed") && a1 == "ping",
            "kill -9 of the step's own process works; the helper answered before the attack",
        ),
        h,
    )
    .await
}

async fn out_one(o: Outcome, h: Container) -> Vec<Outcome> {
    remove(h).await;
    vec![o]
}
