//! Python bases for the interpreter the CI uses, beside the default base: tags, builds, versions.

use bollard::Docker;
use sha2::{Digest, Sha256};

use super::rootfs::ensure_rootfs;
use super::{
    BASE_REPO, BaseOptions, BaseRecipe, ImageError, ProjectKind, SUITE, base_recipe_hash, base_tag,
    build_base, ensure_base_image_for, extra_for, host_lock, pull,
};

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
