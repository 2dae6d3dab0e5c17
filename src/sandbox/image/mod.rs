//! Images: the base images (Python, Rust, Node, Go; online from `python:3.12-slim` /
//! `rust:*-slim` / `node:*-slim` / `golang:*-bookworm`, offline from a debootstrap'd rootfs imported with the Engine API), the build
//! plumbing shared with [`super::prepare`], and the errors of both.
//!
//! Both base paths produce the same content-addressed tag, `patchloop-base:py-<hash>` (and
//! `rust-<hash>`, `node-<hash>`), where the hash covers the recipe in `images/base/` (or
//! `images/rust/`, `images/node/`; compiled in), so a recipe change makes a new tag and an
//! existing tag is reused without rebuilding.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bollard::Docker;
use bollard::query_parameters::{BuildImageOptionsBuilder, CreateImageOptionsBuilder};
use futures_util::StreamExt;
use sha2::{Digest, Sha256};

use super::SandboxError;
use super::context::Entry;
pub use super::lang::ProjectKind;

mod build;
mod python;
mod rootfs;

pub(crate) use build::{LogTail, is_disk_full, run_build};
pub use build::{classify_failure, failing_command, strip_ansi};
pub use python::{
    LABEL_BASE_PYTHON, OFFLINE_PYTHON, ONLINE_PYTHON, base_python, debian_python_tag,
    ensure_debian_python_base, ensure_online_python_base, ensure_python_base, is_python_version,
    online_python_tag,
};
use rootfs::ensure_rootfs;
pub use rootfs::{mirror_from_sources, resolve_mirror};

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

fn which(cmd: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .map(|d| d.join(cmd))
        .find(|p| p.is_file())
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

#[cfg(test)]
mod tests;
