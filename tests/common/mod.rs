//! Shared helpers for integration tests that need a real Docker daemon.
//!
//! Tests that use these FAIL when Docker is missing (never skip): every helper panics with a
//! message that says how to start a daemon.
#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Duration;

use bollard::Docker;
use bollard::models::ContainerInspectResponse;
use bollard::query_parameters::{BuildImageOptions, InspectContainerOptions};
use futures_util::StreamExt;
use sha2::{Digest, Sha256};

use patchloop::sandbox::container::Container;
use patchloop::sandbox::policy::{ContainerPolicy, Hardening, SANDBOX_USER};
use patchloop::sandbox::{
    ExecRequest, ExecResult, LABEL_DEADLINE, LABEL_ROLE, LABEL_RUN, Sandbox, WORKSPACE, docker,
    seccomp,
};

/// The offline base image `.ci/run` builds first; its tag is exported in this variable.
pub const BASE_ENV: &str = "PATCHLOOP_TEST_BASE";
pub const DEFAULT_BASE: &str = "patchloop-probe:base";
/// Repository of the test workspace images (tag = content hash).
pub const WORKSPACE_REPO: &str = "patchloop-test-ws";
/// A root-owned setuid copy of `id` baked into the test image (the F1 probe's target).
pub const SUID_ID: &str = "/opt/patchloop-test/suid-id";

pub fn base_image() -> String {
    std::env::var(BASE_ENV)
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| DEFAULT_BASE.to_string())
}

/// Connect to the daemon or fail the test with the fix.
pub async fn docker() -> Docker {
    match docker::connect().await {
        Ok(d) => d,
        Err(e) => panic!("this test needs a Docker daemon and none answers: {e}"),
    }
}

/// Files of the tiny workspace: a buggy package, its tests, and test-owned fixtures that
/// read-only probes aim at (one per operation, so a control run can do every operation).
pub fn workspace_files() -> Vec<(&'static str, &'static str)> {
    vec![
        ("calc/__init__.py", "def add(a, b):\n    return a - b\n"),
        (
            "tests/test_calc.py",
            "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n",
        ),
        ("tests/data/fixture.json", "{\"a\": 1}\n"),
        ("tests/f_write.txt", "w\n"),
        ("tests/f_create.txt", "c\n"),
        ("tests/f_unlink.txt", "u\n"),
        ("tests/f_chmod.txt", "m\n"),
        ("tests/f_utime.txt", "t\n"),
        ("tests/f_trunc.txt", "r\n"),
        ("tests/f_rename.txt", "n\n"),
        ("tests/f_link.txt", "l\n"),
        ("tests/f_sym.txt", "s\n"),
        (
            "pyproject.toml",
            "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n",
        ),
    ]
}

fn dockerfile(base: &str) -> String {
    format!(
        r#"FROM {base}
COPY workspace/ /workspace/
COPY harness/ /opt/patchloop/harness/
RUN set -e; cd /workspace; chown -R 1000:1000 /workspace; \
    g() {{ git -c safe.directory='*' -c user.name=patchloop -c user.email=patchloop@localhost "$@"; }}; \
    g init -q; g add -A; g commit -qm baseline; chown -R 1000:1000 /workspace/.git; \
    mkdir -p /opt/patchloop /opt/patchloop-test; cp -r .git /opt/patchloop/baseline.git; \
    chown -R 0:0 /opt/patchloop/baseline.git; cp -al /workspace /opt/patchloop/workspace; \
    cp /usr/bin/id {SUID_ID}; chmod 4755 {SUID_ID}
LABEL patchloop.test_cmd="python3 -m pytest -q tests" patchloop.tests_dirs="[\"tests\"]" \
      patchloop.base="{base}" patchloop.test-image="1"
"#
    )
}

fn tar_context(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (path, data) in files {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_mtime(0);
        h.set_cksum();
        b.append_data(&mut h, path, data.as_slice())
            .expect("append to in-memory tar");
    }
    b.into_inner().expect("finish in-memory tar")
}

static WORKSPACE_IMAGE: tokio::sync::OnceCell<String> = tokio::sync::OnceCell::const_new();

/// The sandbox-layout test image FROM the base (see the common brief's layout contract), built
/// once per test process through the Engine API from an in-memory tar (no host paths), tagged
/// by a hash of its content so later runs reuse it.
pub async fn workspace_image() -> String {
    WORKSPACE_IMAGE
        .get_or_init(|| async {
            let d = docker().await;
            let base = base_image();
            let base_id = match d.inspect_image(&base).await {
                Ok(i) => i.id.unwrap_or_default(),
                Err(e) => panic!(
                    "base image {base} is missing ({e}); build it with `patchloop images build --offline` or set {BASE_ENV}"
                ),
            };
            let mut files: Vec<(String, Vec<u8>)> = vec![("Dockerfile".into(), dockerfile(&base).into_bytes())];
            for (p, c) in workspace_files() {
                files.push((format!("workspace/{p}"), c.as_bytes().to_vec()));
            }
            // The harness files as the layout contract places them (/opt/patchloop/harness).
            let harness = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("images/harness");
            let mut entries: Vec<_> = std::fs::read_dir(&harness)
                .unwrap_or_else(|e| panic!("reading {}: {e}", harness.display()))
                .filter_map(Result::ok)
                .filter(|e| e.path().is_file())
                .collect();
            entries.sort_by_key(|e| e.file_name());
            for e in entries {
                let data = std::fs::read(e.path()).unwrap_or_else(|err| panic!("reading {}: {err}", e.path().display()));
                files.push((format!("harness/{}", e.file_name().to_string_lossy()), data));
            }
            let mut h = Sha256::new();
            h.update(base_id.as_bytes());
            for (p, c) in &files {
                h.update(p.as_bytes());
                h.update([0]);
                h.update(c);
                h.update([0]);
            }
            let tag = format!("{WORKSPACE_REPO}:{}", &hex::encode(h.finalize())[..16]);
            if d.inspect_image(&tag).await.is_ok() {
                return tag;
            }
            let opts = BuildImageOptions {
                t: Some(tag.clone()),
                rm: true,
                forcerm: true,
                ..Default::default()
            };
            let mut stream = d.build_image(opts, None, Some(bollard::body_full(tar_context(&files).into())));
            let mut log = String::new();
            while let Some(item) = stream.next().await {
                match item {
                    Ok(info) => {
                        if let Some(s) = info.stream {
                            log.push_str(&s);
                        }
                        if let Some(e) = info.error_detail {
                            panic!("building {tag} failed: {e:?}\n{log}");
                        }
                    }
                    Err(e) => panic!("building {tag} failed: {e}\n{log}"),
                }
            }
            if d.inspect_image(&tag).await.is_err() {
                panic!("building {tag} reported success but the image is missing:\n{log}");
            }
            remove_stale_workspace_images(&d, &base, &tag).await;
            tag
        })
        .await
        .clone()
}

/// Earlier content versions of the test image on the same base are garbage once a new one
/// is built; an image still in use by a container is left alone (Docker refuses, 409).
async fn remove_stale_workspace_images(d: &Docker, base: &str, keep: &str) {
    use bollard::query_parameters::{ListImagesOptions, RemoveImageOptions};
    let filters = HashMap::from([("reference".to_string(), vec![WORKSPACE_REPO.to_string()])]);
    let Ok(images) = d
        .list_images(Some(ListImagesOptions {
            filters: Some(filters),
            ..Default::default()
        }))
        .await
    else {
        return;
    };
    for img in images {
        let same_base = img.labels.get("patchloop.base").map(String::as_str) == Some(base);
        for t in img
            .repo_tags
            .iter()
            .filter(|t| same_base && t.as_str() != keep)
        {
            let _ = d.remove_image(t, None::<RemoveImageOptions>, None).await;
        }
    }
}

/// Canary secrets planted in this process's environment (and in host files a careless harness
/// might forward) before any container is created. None may ever appear inside a sandbox.
pub struct Canaries {
    /// `(VAR, value)`; every value starts with `PL_CANARY_`.
    pub vars: Vec<(String, String)>,
    _dir: tempfile::TempDir,
}

impl Canaries {
    pub fn values(&self) -> Vec<String> {
        self.vars.iter().map(|(_, v)| v.clone()).collect()
    }

    /// The first canary occurring in `text`, if any.
    pub fn found_in(&self, text: &str) -> Option<String> {
        self.vars
            .iter()
            .find(|(_, v)| text.contains(v.as_str()))
            .map(|(k, _)| k.clone())
    }
}

pub const CANARY_VARS: &[&str] = &[
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "INPUT_GITHUB-TOKEN",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "ACTIONS_CACHE_URL",
    "PATCHLOOP_MODEL_KEY",
];

static CANARIES: OnceLock<Canaries> = OnceLock::new();

pub fn canaries() -> &'static Canaries {
    CANARIES.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir for canary files");
        let mut vars = Vec::new();
        for name in CANARY_VARS {
            let n: u64 = rand::random();
            vars.push((name.to_string(), format!("PL_CANARY_{n:016x}")));
        }
        let n: u64 = rand::random();
        let file_canary = format!("PL_CANARY_{n:016x}");
        // A fake $RUNNER_TEMP credential file and a harness ~/.config entry.
        std::fs::write(dir.path().join("credentials"), &file_canary).expect("write canary file");
        std::fs::create_dir_all(dir.path().join("config/gh")).expect("canary config dir");
        std::fs::write(
            dir.path().join("config/gh/hosts.yml"),
            format!("github.com:\n  oauth_token: {file_canary}\n"),
        )
        .expect("write canary config");
        // SAFETY: set once, before the tests create containers; nothing reads these concurrently
        // in a way that could observe a torn write (libtest threads only read DOCKER_HOST).
        unsafe {
            for (k, v) in &vars {
                std::env::set_var(k, v);
            }
            std::env::set_var("RUNNER_TEMP", dir.path());
            std::env::set_var("XDG_CONFIG_HOME", dir.path().join("config"));
        }
        vars.push(("RUNNER_TEMP/credentials".into(), file_canary));
        Canaries { vars, _dir: dir }
    })
}

/// A unique run id for one test process (the `patchloop.run` label prefix).
pub fn run_id(prefix: &str) -> String {
    let n: u32 = rand::random();
    format!("{prefix}-{n:08x}")
}

/// The hardened episode policy used by the tests: the default with `tests/` read-only and a
/// lifetime long enough for the suite (containers are removed explicitly).
pub fn hardened_policy() -> ContainerPolicy {
    ContainerPolicy {
        read_only_paths: vec!["tests".into()],
        lifetime_secs: 600,
        ..Default::default()
    }
}

/// Start a container through patchloop's own code path, or fail the test.
pub async fn start(
    d: &Docker,
    image: &str,
    policy: &ContainerPolicy,
    run: &str,
    role: &str,
) -> Container {
    match Container::start(d, image, policy, run, role).await {
        Ok(c) => c,
        Err(e) => panic!(
            "starting a {role} container ({:?}) failed: {e}",
            policy.hardening
        ),
    }
}

/// A hardened episode container ([`hardened_policy`]) from the workspace image.
pub async fn start_hardened(d: &Docker, run: &str, role: &str) -> Container {
    let image = workspace_image().await;
    start(d, &image, &hardened_policy(), run, role).await
}

/// The unhardened twin for positive controls (bridge network, root, rw root, seccomp
/// unconfined, tests/ writable): the same probe must succeed here or it proves nothing.
pub async fn start_control(d: &Docker, run: &str, role: &str) -> Container {
    let image = workspace_image().await;
    start(d, &image, &hardened_policy().control(), run, role).await
}

/// `bash -c SCRIPT` with a timeout; a sandbox error fails the test.
pub async fn sh(c: &Container, script: &str, timeout: Duration) -> ExecResult {
    exec(c, ExecRequest::shell(script).timeout(timeout)).await
}

pub async fn exec(c: &Container, req: ExecRequest) -> ExecResult {
    let what = req.argv.join(" ");
    match c.exec(req).await {
        Ok(r) => r,
        Err(e) => panic!(
            "exec in {} failed: {e}\n  command: {}",
            c.id(),
            truncate(&what, 300)
        ),
    }
}

pub fn truncate(s: &str, n: usize) -> String {
    patchloop::sandbox::output::truncate_text(s, n)
}

pub async fn inspect(d: &Docker, name: &str) -> ContainerInspectResponse {
    match d
        .inspect_container(name, None::<InspectContainerOptions>)
        .await
    {
        Ok(i) => i,
        Err(e) => panic!("inspecting {name} failed: {e}"),
    }
}

/// Compare `docker inspect` of a container with the hardened golden spec derived from the
/// policy it was created with (docs/security.md A, the docker-bench shape). Returns the
/// violations; empty means the container matches. Canaries anywhere in the inspect JSON are
/// violations too.
///
/// `image_env` is the image's own `Config.Env`: Docker merges it under the container's, so
/// the container env may hold the policy's entries plus the image's, nothing else.
pub fn golden_violations(
    i: &ContainerInspectResponse,
    policy: &ContainerPolicy,
    image_env: &[String],
    canaries: &[String],
) -> Vec<String> {
    let mut v = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            v.push(what);
        }
    };
    let h = i.host_config.clone().unwrap_or_default();
    let cfg = i.config.clone().unwrap_or_default();
    let state = i.state.clone().unwrap_or_default();
    check(
        state.running == Some(true),
        format!("not running: {:?}", state.status),
    );
    check(
        h.network_mode.as_deref() == Some("none"),
        format!("NetworkMode={:?}", h.network_mode),
    );
    check(
        h.readonly_rootfs == Some(true),
        format!("ReadonlyRootfs={:?}", h.readonly_rootfs),
    );
    check(h.privileged != Some(true), "Privileged".into());
    check(
        h.cap_drop == Some(vec!["ALL".to_string()]),
        format!("CapDrop={:?}", h.cap_drop),
    );
    check(
        h.cap_add.as_ref().is_none_or(|c| c.is_empty()),
        format!("CapAdd={:?}", h.cap_add),
    );
    let sec = h.security_opt.clone().unwrap_or_default();
    check(
        sec.iter()
            .any(|s| s == "no-new-privileges:true" || s == "no-new-privileges"),
        format!(
            "SecurityOpt lacks no-new-privileges: {:?}",
            sec.iter().map(|s| truncate(s, 40)).collect::<Vec<_>>()
        ),
    );
    check(
        sec.iter().any(|s| *s == seccomp::security_opt()),
        "SecurityOpt lacks patchloop's seccomp profile".into(),
    );
    check(
        !sec.iter().any(|s| s.contains("unconfined")),
        "SecurityOpt has an unconfined entry".into(),
    );
    check(
        h.memory == Some(policy.memory_bytes),
        format!("Memory={:?}", h.memory),
    );
    check(
        h.memory_swap == h.memory,
        format!("MemorySwap={:?} != Memory", h.memory_swap),
    );
    check(
        h.nano_cpus == Some(policy.nano_cpus),
        format!("NanoCpus={:?}", h.nano_cpus),
    );
    check(
        h.pids_limit == Some(policy.pids_limit),
        format!("PidsLimit={:?}", h.pids_limit),
    );
    check(h.init == Some(true), format!("Init={:?}", h.init));
    check(
        h.auto_remove == Some(true),
        format!("AutoRemove={:?}", h.auto_remove),
    );
    let ul: HashMap<String, (Option<i64>, Option<i64>)> = h
        .ulimits
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|u| (u.name.unwrap_or_default(), (u.soft, u.hard)))
        .collect();
    check(
        ul.get("nofile") == Some(&(Some(policy.nofile), Some(policy.nofile))),
        format!("nofile ulimit {:?}", ul.get("nofile")),
    );
    check(
        ul.get("fsize") == Some(&(Some(policy.fsize_bytes), Some(policy.fsize_bytes))),
        format!("fsize ulimit {:?}", ul.get("fsize")),
    );
    let tmpfs = h.tmpfs.clone().unwrap_or_default();
    check(!tmpfs.is_empty(), "no tmpfs".into());
    for (p, o) in &tmpfs {
        check(o.contains("size="), format!("tmpfs {p} has no size= ({o})"));
        check(
            o.contains("nosuid"),
            format!("tmpfs {p} allows setuid ({o})"),
        );
    }
    // The workspace quota: a sized tmpfs (docs/security.md D4), or a volume when disabled.
    let ws_tmpfs = tmpfs.get(WORKSPACE);
    if policy.workspace_bytes > 0 {
        check(
            ws_tmpfs.is_some_and(|o| o.contains(&format!("size={}", policy.workspace_bytes))),
            format!(
                "workspace tmpfs {ws_tmpfs:?}, want size={}",
                policy.workspace_bytes
            ),
        );
    } else {
        check(
            ws_tmpfs.is_none(),
            format!("workspace tmpfs {ws_tmpfs:?} with no quota"),
        );
    }
    let log = h.log_config.clone().unwrap_or_default();
    check(
        log.config
            .as_ref()
            .is_some_and(|c| c.contains_key("max-size")),
        format!("LogConfig uncapped: {log:?}"),
    );
    check(
        cfg.user.as_deref() == Some(SANDBOX_USER),
        format!("User={:?}", cfg.user),
    );
    for (what, mode) in [
        ("PidMode", h.pid_mode.clone()),
        ("IpcMode", h.ipc_mode.clone()),
        ("UTSMode", h.uts_mode.clone()),
        ("UsernsMode", h.userns_mode.clone()),
    ] {
        check(mode.as_deref() != Some("host"), format!("{what}=host"));
    }
    check(
        h.devices.as_ref().is_none_or(|d| d.is_empty()),
        format!("Devices={:?}", h.devices),
    );
    check(
        h.volumes_from.as_ref().is_none_or(|d| d.is_empty()),
        format!("VolumesFrom={:?}", h.volumes_from),
    );
    check(
        h.binds.as_ref().is_none_or(|d| d.is_empty()),
        format!("Binds={:?}", h.binds),
    );
    // Mounts: the workspace rw (unless it is the quota'd tmpfs) and each read-only path ro,
    // all volumes.
    let mut mounts: Vec<(String, bool, String)> = i
        .mounts
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|m| {
            (
                m.destination.unwrap_or_default(),
                m.rw.unwrap_or(true),
                m.typ.map(|t| t.to_string()).unwrap_or_default(),
            )
        })
        .collect();
    mounts.sort();
    let mut want: Vec<(String, bool, String)> = Vec::new();
    if policy.workspace_bytes <= 0 {
        want.push((WORKSPACE.to_string(), true, "volume".into()));
    }
    for p in &policy.read_only_paths {
        want.push((
            format!("{WORKSPACE}/{}", p.trim_matches('/')),
            false,
            "volume".into(),
        ));
    }
    want.sort();
    check(mounts == want, format!("Mounts={mounts:?}, want {want:?}"));
    let labels = cfg.labels.clone().unwrap_or_default();
    for l in [LABEL_RUN, LABEL_ROLE, LABEL_DEADLINE] {
        check(labels.contains_key(l), format!("label {l} missing"));
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let deadline = labels
        .get(LABEL_DEADLINE)
        .and_then(|d| d.parse::<u64>().ok())
        .unwrap_or(0);
    check(
        deadline > now && deadline <= now + policy.lifetime_secs + 120,
        format!(
            "deadline label {deadline} not within the lifetime ({now} + {})",
            policy.lifetime_secs
        ),
    );
    // The keeper (PID 1's child) is `sleep <lifetime>`, directly or as the step loop's parent
    // shell exec'd into it; the deadline probes (crash-after-start) show it ending for real.
    let lifetime = policy.lifetime_secs.to_string();
    let want_cmd = if policy.step_loop {
        let script: &str = &patchloop::sandbox::steploop::LOOP_SCRIPT;
        check(
            script
                .trim_end()
                .ends_with("exec 3<&- sleep \"$1\" </dev/null >/dev/null 2>&1"),
            "the step loop's parent shell must end as `sleep <lifetime>`".to_string(),
        );
        vec![
            "sh".into(),
            "-c".into(),
            script.into(),
            "sh".into(),
            lifetime,
        ]
    } else {
        vec!["sleep".to_string(), lifetime]
    };
    check(
        cfg.cmd.as_ref() == Some(&want_cmd),
        format!("Cmd={:?} (PID 1 must end at the deadline)", cfg.cmd),
    );
    let env = cfg.env.clone().unwrap_or_default();
    check(
        policy.env.iter().all(|e| env.contains(e)),
        format!("Env={env:?} lacks entries of the policy's allowlist"),
    );
    let foreign: Vec<&String> = env
        .iter()
        .filter(|e| !policy.env.contains(e) && !image_env.contains(e))
        .collect();
    check(
        foreign.is_empty(),
        format!("Env has entries from neither the policy nor the image: {foreign:?}"),
    );
    let json = serde_json::to_string(i).unwrap_or_default();
    for c in canaries {
        check(
            !json.contains(c.as_str()),
            "a canary secret appears in docker inspect".into(),
        );
    }
    check(
        policy.hardening == Hardening::Hardened,
        "policy is not the hardened one".into(),
    );
    v
}

/// The image's own `Config.Env` (Docker merges it under a container's environment).
pub async fn image_env(d: &Docker, image: &str) -> Vec<String> {
    match d.inspect_image(image).await {
        Ok(i) => i.config.and_then(|c| c.env).unwrap_or_default(),
        Err(e) => panic!("inspecting image {image} failed: {e}"),
    }
}

/// Resident set size of this process in bytes (Linux).
pub fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse::<u64>().ok())
        })
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

/// Addresses of this machine the network probes may target: the docker0 gateway (from the
/// daemon's `bridge` network) and a host interface address that is neither loopback nor the
/// gateway (from /proc/net/fib_trie). Never anything external.
pub async fn local_targets(d: &Docker) -> (String, Option<String>) {
    let net = match d
        .inspect_network(
            "bridge",
            None::<bollard::query_parameters::InspectNetworkOptions>,
        )
        .await
    {
        Ok(n) => n,
        Err(e) => panic!("inspecting the default bridge network failed: {e}"),
    };
    // 20.10 leaves Gateway empty on the default bridge: then it is the subnet's first address.
    let configs = net.ipam.and_then(|i| i.config).unwrap_or_default();
    let gateway = configs
        .iter()
        .find_map(|c| c.gateway.clone().filter(|g| !g.is_empty()))
        .or_else(|| {
            configs.iter().find_map(|c| {
                let subnet = c.subnet.as_deref()?;
                let ip: std::net::Ipv4Addr = subnet.split('/').next()?.parse().ok()?;
                Some(std::net::Ipv4Addr::from(u32::from(ip) + 1).to_string())
            })
        })
        .unwrap_or_else(|| panic!("the bridge network has neither a gateway nor an IPv4 subnet"));
    let trie = std::fs::read_to_string("/proc/net/fib_trie").unwrap_or_default();
    let mut host_ip = None;
    let mut last_ip = String::new();
    for line in trie.lines() {
        let t = line.trim();
        if let Some(ip) = t.strip_prefix("|-- ") {
            last_ip = ip.to_string();
        } else if t.contains("/32 host LOCAL")
            && !last_ip.starts_with("127.")
            && last_ip != gateway
            && host_ip.is_none()
        {
            host_ip = Some(last_ip.clone());
        }
    }
    (gateway, host_ip)
}

/// Short sleep helper for polling loops.
pub async fn pause(ms: u64) {
    tokio::time::sleep(Duration::from_millis(ms)).await;
}
