//! Images: the base images (Python, Rust, Node, Go; online from `python:3.12-slim` /
//! `rust:*-slim` / `node:*-slim` / `golang:*-bookworm`, offline from a debootstrap'd rootfs imported with the Engine API), the build
//! plumbing shared with [`super::prepare`], and the errors of both.
//!
//! Both base paths produce the same content-addressed tag, `patchloop-base:py-<hash>` (and
//! `rust-<hash>`, `node-<hash>`), where the hash covers the recipe in `images/base/` (or
//! `images/rust/`, `images/node/`; compiled in), so a recipe change makes a new tag and an
//! existing tag is reused without rebuilding.

use std::collections::HashMap;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bollard::Docker;
use bollard::query_parameters::{BuildImageOptionsBuilder, CreateImageOptionsBuilder};
use futures_util::StreamExt;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncBufReadExt, AsyncReadExt};

use super::SandboxError;
use super::context::{self, Entry};
pub use super::lang::ProjectKind;

/// Harness files put into every sandbox image at `/opt/patchloop/harness/` (root-owned, read-only).
pub const HARNESS_FILES: &[(&str, &str)] = &[(
    "pl_guard.py",
    include_str!("../../../images/harness/pl_guard.py"),
)];

const BASE_DOCKERFILE: &str = include_str!("../../../images/base/Dockerfile");
const BASE_SETUP: &str = include_str!("../../../images/base/setup.sh");
pub(crate) const WITH_CA: &str = include_str!("../../../images/base/with-ca.sh");
const RUST_DOCKERFILE: &str = include_str!("../../../images/rust/Dockerfile");
const RUST_SETUP: &str = include_str!("../../../images/rust/setup.sh");
const NODE_DOCKERFILE: &str = include_str!("../../../images/node/Dockerfile");
const NODE_SETUP: &str = include_str!("../../../images/node/setup.sh");
const GO_DOCKERFILE: &str = include_str!("../../../images/go/Dockerfile");
const GO_SETUP: &str = include_str!("../../../images/go/setup.sh");

/// The image the online path starts from.
pub const ONLINE_FROM: &str = "python:3.12-slim";
/// Repository of base images; the tag is `py-<recipe hash>`.
pub const BASE_REPO: &str = "patchloop-base";
pub const ROOTFS_REPO: &str = "patchloop-rootfs";
const SUITE: &str = "bookworm";
const DEBOOTSTRAP_INCLUDE: &str =
    "python3,python3-pip,python3-venv,python3-pytest,python3-setuptools,git,ca-certificates";
/// Rust and Node start from the Python base's rootfs (one debootstrap per machine; python3 runs
/// the harness helpers as `python3 -I`); their setup.sh adds cargo/rustc or nodejs/npm with apt
/// (debootstrap's `--include` resolves no virtual packages, and rustc needs `libc-dev`).
const RUST_INCLUDE: &str = DEBOOTSTRAP_INCLUDE;
const NODE_INCLUDE: &str = DEBOOTSTRAP_INCLUDE;
const RUST_ONLINE_FROM: &str = "rust:1.83-slim-bookworm";
const NODE_ONLINE_FROM: &str = "node:18-bookworm-slim";
const GO_ONLINE_FROM: &str = "golang:1.22-bookworm";
/// Where the offline Rust base looks for a cargo-nextest to copy in (a glibc build on PATH).
const NEXTEST_BIN: &str = "cargo-nextest";

/// One base image recipe: what `images/<dir>/` holds and where it starts from.
#[derive(Debug, Clone)]
pub struct BaseRecipe {
    pub kind: ProjectKind,
    /// Tag prefix: `py`, `rust`, `node`.
    pub tag_prefix: &'static str,
    pub dockerfile: &'static str,
    pub setup: &'static str,
    pub online_from: &'static str,
    /// Debian packages debootstrap adds to the minbase (offline path).
    pub include: &'static str,
}

impl BaseRecipe {
    pub fn for_kind(kind: ProjectKind) -> BaseRecipe {
        match kind {
            ProjectKind::Python => BaseRecipe {
                kind,
                tag_prefix: "py",
                dockerfile: BASE_DOCKERFILE,
                setup: BASE_SETUP,
                online_from: ONLINE_FROM,
                include: DEBOOTSTRAP_INCLUDE,
            },
            ProjectKind::Rust => BaseRecipe {
                kind,
                tag_prefix: "rust",
                dockerfile: RUST_DOCKERFILE,
                setup: RUST_SETUP,
                online_from: RUST_ONLINE_FROM,
                include: RUST_INCLUDE,
            },
            ProjectKind::Node => BaseRecipe {
                kind,
                tag_prefix: "node",
                dockerfile: NODE_DOCKERFILE,
                setup: NODE_SETUP,
                online_from: NODE_ONLINE_FROM,
                include: NODE_INCLUDE,
            },
            ProjectKind::Go => BaseRecipe {
                kind,
                tag_prefix: "go",
                dockerfile: GO_DOCKERFILE,
                setup: GO_SETUP,
                online_from: GO_ONLINE_FROM,
                include: DEBOOTSTRAP_INCLUDE,
            },
        }
    }
}
const DEFAULT_MIRROR: &str = "http://deb.debian.org/debian";

/// Label keys of sandbox images.
pub const LABEL_TEST_CMD: &str = "patchloop.test_cmd";
/// The typed test command (JSON of `testcmd::TestCommand`, delegations resolved).
pub const LABEL_TEST_COMMAND: &str = "patchloop.test_command";
pub const LABEL_TESTS_DIRS: &str = "patchloop.tests_dirs";
pub const LABEL_BASE: &str = "patchloop.base";
pub const LABEL_FLAVOR: &str = "patchloop.base.flavor";
pub const LABEL_DEPS: &str = "patchloop.deps";
pub const LABEL_INSTALL: &str = "patchloop.install";
/// A note about the environment that the receipt repeats (e.g. the interpreter differs from
/// the one the repository's CI uses).
pub const LABEL_ENV_NOTE: &str = "patchloop.env_note";

/// Receives one line of progress (build output, steps). The CLI prints them on stderr.
pub type ProgressFn = Arc<dyn Fn(&str) + Send + Sync>;

/// Failures of image builds. Every one of them is a configuration or infrastructure problem
/// (CLI exit code 2); the message says what failed and how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    #[error(
        "{path}: {reason}\n  pass the directory of a Python checkout: `patchloop prepare PATH`"
    )]
    BadPath { path: String, reason: String },
    #[error(
        "no test directory found in {path} (looked for tests/, test/, <package>/tests, src/<package>/tests)\n  name it with `--tests-dir DIR` (repeatable)"
    )]
    NoTests { path: String },
    #[error(
        "--tests-dir {dir}: {reason}\n  give a directory relative to the checkout that exists and is copied"
    )]
    BadTestsDir { dir: String, reason: String },
    #[error("unsupported project at {path}: {reason}")]
    Unsupported { path: String, reason: String },
    #[error(
        "the {stage} build failed while running: {command}\n--- last lines of the build log ---\n{log_tail}\n---\n  {hint}"
    )]
    BuildFailed {
        stage: String,
        command: String,
        log_tail: String,
        hint: String,
    },
    #[error(
        "the {stage} build ran out of disk space (no space left on device)\n--- last lines of the build log ---\n{log_tail}\n---\n  free space where Docker keeps its data (`patchloop images prune` removes old sandbox images; `docker system df` shows the rest) and retry"
    )]
    DiskFull { stage: String, log_tail: String },
    #[error(
        "requirements that failed to install were left out ({skipped}), and without them the tests cannot be collected\n--- last lines of the collection ---\n{log_tail}\n---\n  {hint}"
    )]
    MissingDependencies {
        skipped: String,
        log_tail: String,
        hint: String,
    },
    #[error("cannot build the base image offline: {reason}")]
    Offline { reason: String },
    #[error("cannot pull {image}: {reason}")]
    PullFailed { image: String, reason: String },
    /// The message names the cause itself; it is not chained as a source, so anyhow's `{:#}`
    /// does not print it twice.
    #[error("{what}: {cause}")]
    Io { what: String, cause: std::io::Error },
    #[error(
        "image {tag} is not a patchloop sandbox image: {reason}\n  build it with `patchloop prepare PATH`"
    )]
    NotPrepared { tag: String, reason: String },
}

impl ImageError {
    /// The CLI exit code: 2, configuration or infrastructure error.
    pub fn exit_code(&self) -> u8 {
        2
    }

    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ImageError {
        let what = what.into();
        move |cause| ImageError::Io { what, cause }
    }

    pub(crate) fn docker(
        action: impl Into<String>,
    ) -> impl FnOnce(bollard::errors::Error) -> ImageError {
        let f = SandboxError::docker(action);
        move |e| ImageError::Sandbox(f(e))
    }
}

/// How to get the base image.
#[derive(Clone, Default)]
pub struct BaseOptions {
    /// Skip the pull of `python:3.12-slim` and build from debootstrap directly.
    pub offline: bool,
    /// Debian mirror for debootstrap (default: the host's apt sources, else deb.debian.org).
    pub mirror: Option<String>,
    /// Extra CA certificate(s) (PEM) trusted by pip/apt during builds.
    pub ca_cert: Option<PathBuf>,
    pub progress: Option<ProgressFn>,
}

impl std::fmt::Debug for BaseOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BaseOptions")
            .field("offline", &self.offline)
            .field("mirror", &self.mirror)
            .field("ca_cert", &self.ca_cert)
            .finish_non_exhaustive()
    }
}

impl BaseOptions {
    pub(crate) fn say(&self, line: &str) {
        say(&self.progress, line);
    }

    /// The CA file: `--ca-cert`, else `SSL_CERT_FILE`, else `PIP_CERT` (when set and readable).
    pub fn resolved_ca_cert(&self) -> Option<PathBuf> {
        self.ca_cert.clone().or_else(|| {
            ["SSL_CERT_FILE", "PIP_CERT"]
                .iter()
                .filter_map(std::env::var_os)
                .map(PathBuf::from)
                .find(|p| p.is_file())
        })
    }

    /// The CA file's content (empty when none): goes into build contexts as `ca.crt`.
    pub(crate) fn ca_bytes(&self) -> Result<Vec<u8>, ImageError> {
        match self.resolved_ca_cert() {
            None => Ok(Vec::new()),
            Some(p) => std::fs::read(&p).map_err(ImageError::io(format!(
                "cannot read the CA certificate {} (fix or drop --ca-cert / SSL_CERT_FILE / PIP_CERT)",
                p.display()
            ))),
        }
    }
}

pub(crate) fn say(progress: &Option<ProgressFn>, line: &str) {
    match progress {
        Some(f) => f(line),
        None => tracing::debug!("{line}"),
    }
}

/// The Python recipe hash (hex, 16 digits) that names the base image.
pub fn base_recipe_hash() -> String {
    recipe_hash(ProjectKind::Python, None)
}

/// The recipe hash of a kind's base; `extra` is the sha256 of a binary copied in (nextest).
fn recipe_hash(kind: ProjectKind, extra: Option<&str>) -> String {
    let r = BaseRecipe::for_kind(kind);
    let mut h = Sha256::new();
    for part in [
        r.dockerfile,
        r.setup,
        WITH_CA,
        r.online_from,
        SUITE,
        r.include,
    ] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    // Python's parts are unchanged from before other kinds existed (its tag stays the same).
    if let Some(x) = extra {
        h.update(x.as_bytes());
        h.update([0]);
    }
    hex::encode(h.finalize())[..16].to_string()
}

/// `patchloop-base:py-<hash>`.
pub fn base_tag() -> String {
    format!("{BASE_REPO}:py-{}", base_recipe_hash())
}

/// Makes sure the Python base image exists and returns its tag (see [`ensure_base_image_for`]).
pub async fn ensure_base_image(docker: &Docker, opts: &BaseOptions) -> Result<String, ImageError> {
    ensure_base_image_for(docker, opts, ProjectKind::Python).await
}

/// A binary copied into a base image: its bytes (empty when absent) and what the tag hashes.
struct Extra {
    bytes: Vec<u8>,
    tag_part: Option<String>,
}

/// The Rust base copies a cargo-nextest found on PATH (a glibc build; Debian has none and
/// rustc 1.63 cannot build it); without one the image reports through libtest's JUnit.
fn extra_for(kind: ProjectKind, opts: &BaseOptions) -> Extra {
    if kind != ProjectKind::Rust {
        return Extra {
            bytes: Vec::new(),
            tag_part: None,
        };
    }
    match which(NEXTEST_BIN).and_then(|p| std::fs::read(&p).ok().map(|b| (p, b))) {
        Some((path, bytes)) => {
            opts.say(&format!(
                "found {} ({} bytes): copying it into the Rust base for JUnit reports",
                path.display(),
                bytes.len()
            ));
            let sum = hex::encode(Sha256::digest(&bytes));
            Extra {
                bytes,
                tag_part: Some(format!("nextest {sum}")),
            }
        }
        None => {
            opts.say("no cargo-nextest on PATH: the Rust base reports through libtest's JUnit format (RUSTC_BOOTSTRAP=1)");
            Extra {
                bytes: Vec::new(),
                tag_part: Some("no nextest".into()),
            }
        }
    }
}

/// The base tag of a kind (the Rust one depends on the cargo-nextest found on PATH).
pub fn base_tag_for(kind: ProjectKind, opts: &BaseOptions) -> String {
    let extra = extra_for(kind, opts);
    tag_of(kind, &extra)
}

fn tag_of(kind: ProjectKind, extra: &Extra) -> String {
    let r = BaseRecipe::for_kind(kind);
    format!(
        "{BASE_REPO}:{}-{}",
        r.tag_prefix,
        recipe_hash(kind, extra.tag_part.as_deref())
    )
}

/// Makes sure the base image of `kind` exists and returns its tag. Reuses an existing tag;
/// otherwise tries the online path (pull e.g. `python:3.12-slim`) unless `offline`, and falls
/// back to debootstrap when the pull fails.
pub async fn ensure_base_image_for(
    docker: &Docker,
    opts: &BaseOptions,
    kind: ProjectKind,
) -> Result<String, ImageError> {
    let recipe = BaseRecipe::for_kind(kind);
    let extra = extra_for(kind, opts);
    let tag = tag_of(kind, &extra);
    if docker.inspect_image(&tag).await.is_ok() {
        opts.say(&format!("base image {tag} exists; reusing it"));
        return Ok(tag);
    }
    let ca = opts.ca_bytes()?;
    // One builder per machine: parallel test binaries or CLI runs wait here instead of running
    // debootstrap side by side; whoever waited finds the tag made.
    let lock_name = match kind {
        ProjectKind::Python => format!("base-{}", base_recipe_hash()),
        _ => format!("base-{}", tag.replace([':', '/'], "-")),
    };
    let _lock = host_lock(&lock_name, opts).await?;
    if docker.inspect_image(&tag).await.is_ok() {
        opts.say(&format!("base image {tag} was built meanwhile; reusing it"));
        return Ok(tag);
    }
    let started = std::time::Instant::now();
    let from = recipe.online_from;
    if !opts.offline {
        match pull(docker, from, opts).await {
            Ok(()) => {
                opts.say(&format!("building {tag} from {from}"));
                build_base(
                    docker, &tag, &recipe, from, "online", &ca, &extra, opts, None,
                )
                .await?;
                opts.say(&format!(
                    "built {tag} in {:.0}s",
                    started.elapsed().as_secs_f64()
                ));
                return Ok(tag);
            }
            Err(reason) => opts.say(&format!(
                "cannot pull {from} ({reason}); building the base offline with debootstrap"
            )),
        }
    }
    let rootfs = ensure_rootfs(docker, opts, SUITE, recipe.include).await?;
    opts.say(&format!("building {tag} from {rootfs}"));
    build_base(
        docker, &tag, &recipe, &rootfs, "offline", &ca, &extra, opts, None,
    )
    .await?;
    opts.say(&format!(
        "built {tag} in {:.0}s",
        started.elapsed().as_secs_f64()
    ));
    Ok(tag)
}

/// The Python of the default base: `python:3.12-slim` online, Debian bookworm's offline.
pub const ONLINE_PYTHON: &str = "3.12";
pub const OFFLINE_PYTHON: &str = "3.11";

/// Online `python:X.Y-slim` images whose pull failed in this process (not tried again).
static FAILED_PULLS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// The Python base for a wanted interpreter version (the CI's, see `sandbox::ci`). `None`, the
/// default base's own version, or `--offline` give the default base; otherwise
/// `patchloop-base:py<X.Y>-<hash>` built from `python:X.Y-slim`, and when that cannot be pulled
/// the default base. Returns the tag and, when the interpreter differs from the wanted one, a
/// note saying so.
pub async fn ensure_python_base(
    docker: &Docker,
    opts: &BaseOptions,
    want: Option<&str>,
) -> Result<(String, Option<String>), ImageError> {
    let default = || async {
        let tag = ensure_base_image_for(docker, opts, ProjectKind::Python).await?;
        let have = base_python(docker, &tag).await;
        let note = want.filter(|w| *w != have).map(|w| {
            format!(
                "the repository tests with Python {w}; this image has Python {have} ({})",
                if opts.offline {
                    "offline: the Debian interpreter"
                } else {
                    "python:{w}-slim could not be pulled"
                }
            )
            .replace("{w}", w)
        });
        Ok::<_, ImageError>((tag, note))
    };
    let Some(w) = want else {
        return default().await;
    };
    if !is_python_version(w) || opts.offline || w == ONLINE_PYTHON {
        return default().await;
    }
    let default_tag = base_tag();
    if docker.inspect_image(&default_tag).await.is_ok()
        && base_python(docker, &default_tag).await == w
    {
        return Ok((default_tag, None));
    }
    match ensure_online_python_base(docker, opts, w).await {
        Ok(tag) => Ok((tag, None)),
        Err(ImageError::PullFailed { image, reason }) => {
            opts.say(&format!(
                "cannot pull {image} ({reason}); using the default base"
            ));
            default().await
        }
        Err(e) => Err(e),
    }
}

/// Whether `v` is an `X.Y` version.
pub fn is_python_version(v: &str) -> bool {
    v.split('.').count() == 2 && v.split('.').all(|p| p.parse::<u32>().is_ok())
}

/// The tag of the Python base built from `python:<w>-slim`.
pub fn online_python_tag(w: &str) -> String {
    let from = format!("python:{w}-slim");
    let mut h = Sha256::new();
    h.update(base_recipe_hash().as_bytes());
    h.update(from.as_bytes());
    format!("{BASE_REPO}:py{w}-{}", &hex::encode(h.finalize())[..16])
}

/// The tag of the offline Python base of a Debian suite whose `python3` is `version` (the
/// default base for bookworm).
pub fn debian_python_tag(suite: &str, version: &str) -> String {
    if suite == SUITE {
        return base_tag();
    }
    let mut h = Sha256::new();
    for part in [base_recipe_hash().as_str(), "debian", suite] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    format!(
        "{BASE_REPO}:py{version}-{}",
        &hex::encode(h.finalize())[..16]
    )
}

/// The Python base built from `python:<w>-slim` (pulled first; reused by tag).
/// [`ImageError::PullFailed`] when the image cannot be pulled (not tried again in this process).
pub async fn ensure_online_python_base(
    docker: &Docker,
    opts: &BaseOptions,
    w: &str,
) -> Result<String, ImageError> {
    let from = format!("python:{w}-slim");
    let tag = online_python_tag(w);
    if docker.inspect_image(&tag).await.is_ok() {
        opts.say(&format!("base image {tag} exists; reusing it"));
        return Ok(tag);
    }
    let failed = FAILED_PULLS
        .lock()
        .map(|f| f.contains(&from))
        .unwrap_or(false);
    if failed {
        return Err(ImageError::PullFailed {
            image: from,
            reason: "its pull failed earlier in this run".into(),
        });
    }
    if let Err(reason) = pull(docker, &from, opts).await {
        if let Ok(mut f) = FAILED_PULLS.lock() {
            f.push(from.clone());
        }
        return Err(ImageError::PullFailed {
            image: from,
            reason,
        });
    }
    let ca = opts.ca_bytes()?;
    let recipe = BaseRecipe::for_kind(ProjectKind::Python);
    let extra = extra_for(ProjectKind::Python, opts);
    opts.say(&format!(
        "building {tag} from {from} (the repository's Python)"
    ));
    build_base(
        docker,
        &tag,
        &recipe,
        &from,
        "online",
        &ca,
        &extra,
        opts,
        Some(w),
    )
    .await?;
    Ok(tag)
}

/// The offline Python base of another Debian suite (debootstrap of `suite` + the same recipe as
/// the default base), whose interpreter is `version`; reused by tag, one builder per machine.
/// Minutes on first use (the suite's debootstrap), needs root and debootstrap like the default.
pub async fn ensure_debian_python_base(
    docker: &Docker,
    opts: &BaseOptions,
    suite: &str,
    version: &str,
) -> Result<String, ImageError> {
    let tag = debian_python_tag(suite, version);
    if docker.inspect_image(&tag).await.is_ok() {
        opts.say(&format!("base image {tag} exists; reusing it"));
        return Ok(tag);
    }
    let _lock = host_lock(&format!("base-{}", tag.replace([':', '/'], "-")), opts).await?;
    if docker.inspect_image(&tag).await.is_ok() {
        opts.say(&format!("base image {tag} was built meanwhile; reusing it"));
        return Ok(tag);
    }
    let started = std::time::Instant::now();
    let recipe = BaseRecipe::for_kind(ProjectKind::Python);
    let rootfs = ensure_rootfs(docker, opts, suite, recipe.include).await?;
    let ca = opts.ca_bytes()?;
    let extra = extra_for(ProjectKind::Python, opts);
    opts.say(&format!(
        "building {tag} from {rootfs} (Debian {suite}'s Python {version})"
    ));
    build_base(
        docker,
        &tag,
        &recipe,
        &rootfs,
        "offline",
        &ca,
        &extra,
        opts,
        Some(version),
    )
    .await?;
    opts.say(&format!(
        "built {tag} in {:.0}s",
        started.elapsed().as_secs_f64()
    ));
    Ok(tag)
}

/// Label of a Python base built for a named interpreter: its `X.Y`.
pub const LABEL_BASE_PYTHON: &str = "patchloop.base.python";

/// `X.Y` of a Python base image: its [`LABEL_BASE_PYTHON`], else the official images'
/// `PYTHON_VERSION`, else Debian bookworm's.
pub async fn base_python(docker: &Docker, tag: &str) -> String {
    let config = docker
        .inspect_image(tag)
        .await
        .ok()
        .and_then(|i| i.config)
        .unwrap_or_default();
    if let Some(v) = config
        .labels
        .as_ref()
        .and_then(|l| l.get(LABEL_BASE_PYTHON))
        .filter(|v| is_python_version(v))
    {
        return v.clone();
    }
    config
        .env
        .unwrap_or_default()
        .iter()
        .find_map(|e| e.strip_prefix("PYTHON_VERSION="))
        .map(|v| v.split('.').take(2).collect::<Vec<_>>().join("."))
        .unwrap_or_else(|| OFFLINE_PYTHON.to_string())
}

/// An exclusive advisory lock on a file in the temp dir, held until dropped.
pub(crate) async fn host_lock(name: &str, opts: &BaseOptions) -> Result<std::fs::File, ImageError> {
    let path = std::env::temp_dir().join(format!("patchloop-{name}.lock"));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(ImageError::io(format!(
            "cannot open the lock file {}",
            path.display()
        )))?;
    if flock(&file, true).map_err(ImageError::io(format!("cannot lock {}", path.display())))? {
        return Ok(file);
    }
    opts.say(&format!(
        "another patchloop builds the base image (lock {}); waiting",
        path.display()
    ));
    tokio::task::spawn_blocking(move || flock(&file, false).map(|_| file))
        .await
        .map_err(|e| ImageError::Io {
            what: "waiting for the base-image lock".into(),
            cause: std::io::Error::other(e.to_string()),
        })?
        .map_err(ImageError::io(format!("cannot lock {}", path.display())))
}

/// An exclusive `flock` (released when the file is closed). Returns false when `nonblocking`
/// and another process holds it. (std's `File::lock` needs Rust 1.89; the MSRV is 1.88.)
fn flock(file: &std::fs::File, nonblocking: bool) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    let op = libc::LOCK_EX | if nonblocking { libc::LOCK_NB } else { 0 };
    // SAFETY: flock only reads the descriptor, which `file` keeps open for the call.
    let rc = unsafe { libc::flock(file.as_raw_fd(), op) };
    if rc == 0 {
        return Ok(true);
    }
    let err = std::io::Error::last_os_error();
    if nonblocking && err.raw_os_error() == Some(libc::EWOULDBLOCK) {
        return Ok(false);
    }
    Err(err)
}

async fn pull(docker: &Docker, image: &str, opts: &BaseOptions) -> Result<(), String> {
    if docker.inspect_image(image).await.is_ok() {
        return Ok(());
    }
    let (repo, tag) = image.split_once(':').unwrap_or((image, "latest"));
    let options = CreateImageOptionsBuilder::default()
        .from_image(repo)
        .tag(tag)
        .build();
    let mut stream = docker.create_image(Some(options), None, None);
    let work = async {
        while let Some(item) = stream.next().await {
            let info = item.map_err(|e| e.to_string())?;
            if let Some(status) = info.status
                && info.progress_detail.is_none()
            {
                opts.say(&format!("pull: {status}"));
            }
        }
        Ok(())
    };
    tokio::time::timeout(Duration::from_secs(600), work)
        .await
        .map_err(|_| "the pull took longer than 10 minutes".to_string())?
}

#[allow(clippy::too_many_arguments)]
async fn build_base(
    docker: &Docker,
    tag: &str,
    recipe: &BaseRecipe,
    from: &str,
    flavor: &str,
    ca: &[u8],
    extra: &Extra,
    opts: &BaseOptions,
    python: Option<&str>,
) -> Result<(), ImageError> {
    let mut entries = vec![
        Entry::data("Dockerfile", recipe.dockerfile, 0o644),
        Entry::Dir {
            dest: "patchloop".into(),
            mode: 0o755,
        },
        Entry::data("patchloop/setup.sh", recipe.setup, 0o755),
        Entry::data("patchloop/with-ca.sh", WITH_CA, 0o755),
        Entry::data("patchloop/ca.crt", ca.to_vec(), 0o644),
    ];
    if recipe.kind == ProjectKind::Rust {
        entries.push(Entry::data(
            "patchloop/cargo-nextest",
            extra.bytes.clone(),
            0o755,
        ));
    }
    let mut labels = HashMap::from([
        (LABEL_FLAVOR.to_string(), flavor.to_string()),
        ("patchloop.base.from".to_string(), from.to_string()),
    ]);
    if let Some(v) = python {
        labels.insert(LABEL_BASE_PYTHON.to_string(), v.to_string());
    }
    if recipe.kind != ProjectKind::Python {
        labels.insert(
            super::lang::LABEL_KIND.to_string(),
            recipe.kind.as_str().to_string(),
        );
    }
    let args = HashMap::from([("BASE_IMAGE".to_string(), from.to_string())]);
    let options = BuildImageOptionsBuilder::default()
        .dockerfile("Dockerfile")
        .t(tag)
        .rm(true)
        .forcerm(true)
        .labels(&labels)
        .buildargs(&args)
        .build();
    run_build(docker, options, entries, "base image", &opts.progress).await?;
    Ok(())
}

/// The Debian mirror: `--mirror`, else the first `deb.debian.org`-style URI of the host's apt
/// sources, else deb.debian.org.
pub fn resolve_mirror(explicit: Option<&str>) -> String {
    if let Some(m) = explicit {
        return m.to_string();
    }
    for path in [
        "/etc/apt/sources.list.d/debian.sources",
        "/etc/apt/sources.list",
    ] {
        if let Ok(text) = std::fs::read_to_string(path)
            && let Some(m) = mirror_from_sources(&text)
        {
            return m;
        }
    }
    DEFAULT_MIRROR.to_string()
}

/// The main-archive mirror named in apt sources (deb822 `URIs:` or one-line `deb URI suite`),
/// skipping security mirrors.
pub fn mirror_from_sources(text: &str) -> Option<String> {
    for line in text.lines().map(str::trim) {
        if line.starts_with('#') {
            continue;
        }
        let uri = if let Some(rest) = line.strip_prefix("URIs:") {
            rest.split_whitespace().next()
        } else if let Some(rest) = line.strip_prefix("deb ") {
            rest.split_whitespace().find(|w| !w.starts_with('['))
        } else {
            None
        };
        if let Some(uri) = uri
            && (uri.starts_with("http://") || uri.starts_with("https://"))
            && !uri.contains("security")
        {
            return Some(uri.trim_end_matches('/').to_string());
        }
    }
    None
}

fn rootfs_tag(suite: &str, include: &str) -> String {
    let mut h = Sha256::new();
    h.update(suite.as_bytes());
    h.update(include.as_bytes());
    format!("{ROOTFS_REPO}:{suite}-{}", &hex::encode(h.finalize())[..12])
}

/// Whether this process runs as root (debootstrap needs it), from `/proc/self/status`.
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| euid_from_status(&s))
        == Some(0)
}

fn euid_from_status(status: &str) -> Option<u32> {
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}

/// debootstrap a minbase rootfs of a Debian suite and `docker import` it (Engine API, streamed
/// tar); reused when its tag exists.
async fn ensure_rootfs(
    docker: &Docker,
    opts: &BaseOptions,
    suite: &str,
    include: &str,
) -> Result<String, ImageError> {
    let tag = rootfs_tag(suite, include);
    if docker.inspect_image(&tag).await.is_ok() {
        opts.say(&format!("rootfs {tag} exists; reusing it"));
        return Ok(tag);
    }
    if which("debootstrap").is_none() {
        return Err(ImageError::Offline {
            reason: "debootstrap is not installed\n  install it with `apt-get install debootstrap` (scripts/ensure-docker does), or make the online base image (python:3.12-slim, rust:*-slim, node:*-slim) pullable".into(),
        });
    }
    if !is_root() {
        return Err(ImageError::Offline {
            reason: "debootstrap needs root\n  run `sudo patchloop images build --offline` once; later builds reuse the image".into(),
        });
    }
    let mirror = resolve_mirror(opts.mirror.as_deref());
    let dir = tempfile::Builder::new()
        .prefix("patchloop-rootfs-")
        .tempdir_in("/var/tmp")
        .map_err(ImageError::io(
            "cannot create a directory for debootstrap in /var/tmp",
        ))?;
    opts.say(&format!(
        "debootstrap {suite} from {mirror} into {} (about a minute)",
        dir.path().display()
    ));
    debootstrap(dir.path(), &mirror, suite, include, opts).await?;
    opts.say(&format!("importing the rootfs as {tag}"));
    import_dir(docker, dir.path(), &tag).await?;
    Ok(tag)
}

fn which(cmd: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .map(|d| d.join(cmd))
        .find(|p| p.is_file())
}

async fn debootstrap(
    dir: &Path,
    mirror: &str,
    suite: &str,
    include: &str,
    opts: &BaseOptions,
) -> Result<(), ImageError> {
    let bin = which("debootstrap").unwrap_or_else(|| PathBuf::from("debootstrap"));
    let mut child = tokio::process::Command::new(bin)
        .arg("--variant=minbase")
        .arg(format!("--include={include}"))
        .arg(suite)
        .arg(dir)
        .arg(mirror)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(ImageError::io("cannot start debootstrap"))?;
    let mut tail = LogTail::new(30);
    let stderr = child.stderr.take();
    let err_task = tokio::spawn(async move {
        let mut text = String::new();
        if let Some(mut e) = stderr {
            let _ = e.read_to_string(&mut text).await;
        }
        text
    });
    if let Some(out) = child.stdout.take() {
        let mut lines = tokio::io::BufReader::new(out).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            // debootstrap prints one line per package; show the phases only.
            if line.starts_with("I: Retrieving Release")
                || line.starts_with("I: Validating") && line.ends_with("Packages")
                || line.starts_with("I: Extracting base-files")
                || line.starts_with("I: Installing core")
                || line.starts_with("I: Configuring required")
                || line.starts_with("I: Unpacking the base")
                || line.starts_with("I: Configuring the base")
                || line.starts_with("I: Base system installed")
            {
                opts.say(&format!("debootstrap: {line}"));
            }
            tail.push(line);
        }
    }
    let status = child
        .wait()
        .await
        .map_err(ImageError::io("debootstrap did not finish"))?;
    let stderr_text = err_task.await.unwrap_or_default();
    for l in stderr_text.lines() {
        tail.push(l.to_string());
    }
    if !status.success() {
        let log_tail = tail.render();
        if is_disk_full(&log_tail) {
            return Err(ImageError::DiskFull {
                stage: "debootstrap".into(),
                log_tail,
            });
        }
        return Err(ImageError::BuildFailed {
            stage: "offline base (debootstrap)".into(),
            command: format!(
                "debootstrap --variant=minbase --include={include} {suite} {} {mirror}",
                dir.display()
            ),
            log_tail,
            hint: "check that the mirror is reachable (choose another with --mirror URL)".into(),
        });
    }
    Ok(())
}

/// `docker import` of a directory: GNU tar streams it (it keeps devices, hard links and xattrs
/// faithfully) into the Engine API's image-create endpoint.
async fn import_dir(docker: &Docker, dir: &Path, tag: &str) -> Result<(), ImageError> {
    let mut child = tokio::process::Command::new("tar")
        .args(["--numeric-owner", "--one-file-system", "-C"])
        .arg(dir)
        .args([
            "--exclude=./var/cache/apt/archives/*.deb",
            "--exclude=./dev/*",
            "--exclude=./proc/*",
            "--exclude=./sys/*",
            "-cf",
            "-",
            ".",
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(ImageError::io("cannot start tar to stream the rootfs"))?;
    let Some(stdout) = child.stdout.take() else {
        return Err(ImageError::Offline {
            reason: "tar gave no output stream".into(),
        });
    };
    let body = futures_util::stream::unfold(stdout, |mut out| async move {
        let mut buf = vec![0u8; 256 * 1024];
        match out.read(&mut buf).await {
            Ok(0) => None,
            Ok(n) => {
                buf.truncate(n);
                Some((Ok(bytes::Bytes::from(buf)), out))
            }
            Err(e) => Some((Err(e), out)),
        }
    });
    let (repo, t) = tag.split_once(':').unwrap_or((tag, "latest"));
    let options = CreateImageOptionsBuilder::default()
        .from_src("-")
        .repo(repo)
        .tag(t)
        .build();
    let mut stream = docker.create_image(Some(options), Some(bollard::body_try_stream(body)), None);
    while let Some(item) = stream.next().await {
        if let Err(e) = item {
            let text = e.to_string();
            if is_disk_full(&text) {
                return Err(ImageError::DiskFull {
                    stage: "rootfs import".into(),
                    log_tail: text,
                });
            }
            return Err(ImageError::docker("importing the debootstrap rootfs")(e));
        }
    }
    let status = child
        .wait()
        .await
        .map_err(ImageError::io("tar of the rootfs did not finish"))?;
    if !status.success() {
        return Err(ImageError::Offline {
            reason: format!("tar of the rootfs exited with {status}"),
        });
    }
    Ok(())
}

/// The last lines of a log.
pub(crate) struct LogTail {
    lines: VecDeque<String>,
    cap: usize,
}

impl LogTail {
    pub(crate) fn new(cap: usize) -> Self {
        LogTail {
            lines: VecDeque::with_capacity(cap),
            cap,
        }
    }

    pub(crate) fn push(&mut self, line: String) {
        if self.lines.len() == self.cap {
            self.lines.pop_front();
        }
        self.lines.push_back(line);
    }

    pub(crate) fn render(&self) -> String {
        self.lines.iter().cloned().collect::<Vec<_>>().join("\n")
    }
}

pub(crate) fn is_disk_full(text: &str) -> bool {
    let t = text.to_ascii_lowercase();
    t.contains("no space left on device") || t.contains("disk quota exceeded")
}

/// What failed, from the build log and the daemon's error: a `patchloop: FAILED: CMD` line our
/// scripts print wins, then the daemon's "The command '...' returned a non-zero code", then the
/// last `Step N/M` line.
pub fn failing_command(log: &str, error: &str) -> String {
    if let Some(line) = log
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("patchloop: FAILED: "))
    {
        return line.to_string();
    }
    if let Some(rest) = error.strip_prefix("The command '")
        && let Some((cmd, _)) = rest.rsplit_once("' returned")
    {
        return cmd.to_string();
    }
    if let Some(step) = log.lines().rev().find(|l| l.starts_with("Step ")) {
        return step.to_string();
    }
    error.to_string()
}

/// The error for a failed build: out of disk space, or the failing command with the log's tail.
pub fn classify_failure(stage: &str, log_tail: &str, error: &str) -> ImageError {
    let log_tail = format!("{log_tail}\n{error}");
    if is_disk_full(&log_tail) {
        return ImageError::DiskFull {
            stage: stage.to_string(),
            log_tail,
        };
    }
    let hint = if log_tail.contains("CERTIFICATE_VERIFY_FAILED") {
        "TLS verification failed (a TLS-intercepting proxy?): pass its CA with --ca-cert FILE (or set SSL_CERT_FILE / PIP_CERT)"
    } else {
        "fix the command above (or the files it reads) and run again"
    };
    ImageError::BuildFailed {
        stage: stage.to_string(),
        command: failing_command(&log_tail, error),
        log_tail,
        hint: hint.into(),
    }
}

/// Removes ANSI escape sequences (the builder colours stderr) and carriage returns.
pub fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        if c != '\r' {
            out.push(c);
        }
    }
    out
}

/// Streams a context to the build endpoint (classic builder), forwards its output as progress
/// and turns failures into [`ImageError::BuildFailed`] / [`ImageError::DiskFull`]. Returns the
/// image id.
pub(crate) async fn run_build(
    docker: &Docker,
    options: bollard::query_parameters::BuildImageOptions,
    entries: Vec<Entry>,
    stage: &str,
    progress: &Option<ProgressFn>,
) -> Result<String, ImageError> {
    let tag = options.t.clone().unwrap_or_default();
    let body = bollard::body_try_stream(context::tar_stream(entries));
    let mut stream = docker.build_image(options, None, Some(body));
    let mut tail = LogTail::new(40);
    let mut failure: Option<String> = None;
    while let Some(item) = stream.next().await {
        match item {
            Ok(info) => {
                if let Some(text) = info.stream.as_deref() {
                    for line in text.lines().map(strip_ansi) {
                        if line.trim().is_empty() {
                            continue;
                        }
                        say(progress, &format!("{stage}: {line}"));
                        tail.push(line);
                    }
                }
                if let Some(detail) = info.error_detail.and_then(|d| d.message) {
                    failure = Some(detail);
                }
            }
            Err(bollard::errors::Error::DockerStreamError { error }) => {
                failure = Some(error);
                break;
            }
            Err(e) => {
                let text = e.to_string();
                if is_disk_full(&text) {
                    failure = Some(text);
                    break;
                }
                return Err(ImageError::docker(format!("building the {stage}"))(e));
            }
        }
    }
    if let Some(error) = failure {
        return Err(classify_failure(stage, &tail.render(), &error));
    }
    let inspect = docker
        .inspect_image(&tag)
        .await
        .map_err(ImageError::docker(format!(
            "inspecting the freshly built {tag}"
        )))?;
    Ok(inspect.id.unwrap_or_default())
}

#[cfg(test)]
mod tests;
