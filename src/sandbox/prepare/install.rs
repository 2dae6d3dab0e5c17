//! The install layer: whether a project gets one (as CI installs it) and the editable install.

use bollard::Docker;
use bollard::query_parameters::BuildImageOptionsBuilder;
use sha2::{Digest, Sha256};

use super::{CONTEXT_FORMAT, INSTALL_REPO, dir, workspace_entries};
use crate::sandbox::ci;
use crate::sandbox::context::{Entry, SourceTree};
use crate::sandbox::image::{self, ImageError, ProgressFn};
use crate::sandbox::lang::ProjectKind;

const INSTALL_DOCKERFILE: &str = include_str!("../../../images/sandbox/install.Dockerfile");

const INSTALL_SH: &str = include_str!("../../../images/sandbox/install.sh");

/// Whether (and why) a Python project gets the install layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstallLayer {
    None,
    Editable,
    /// CI tests a built install; the sandbox installs editable (a patch must take effect).
    EditableForBuilt,
}

/// The install layer mirrors CI: none when CI runs the tests from the checkout, editable
/// otherwise (and when the repository says nothing, as before).
pub fn install_layer(
    kind: ProjectKind,
    installable: bool,
    ci: Option<ci::Install>,
) -> InstallLayer {
    if kind != ProjectKind::Python || !installable {
        return InstallLayer::None;
    }
    match ci {
        Some(ci::Install::Checkout) => InstallLayer::None,
        Some(ci::Install::Built) => InstallLayer::EditableForBuilt,
        Some(ci::Install::Editable) | None => InstallLayer::Editable,
    }
}

/// The names that decide what an editable install maps: the checkout's top-level entries and
/// those under `src/` (a new top-level package needs a new install; a changed file does not).
pub fn install_layout(tree: &SourceTree) -> Vec<String> {
    let mut names: Vec<String> = tree
        .entries
        .iter()
        .map(Entry::dest)
        .filter(|d| !d.contains('/') || (d.starts_with("src/") && d.matches('/').count() == 1))
        .map(str::to_string)
        .collect();
    names.sort();
    names
}

/// The install image (project installed editable, generated files kept): reused while the
/// dependencies image and the top-level layout are unchanged.
pub(super) async fn ensure_install(
    docker: &Docker,
    deps: &str,
    tree: &SourceTree,
    progress: &Option<ProgressFn>,
) -> Result<String, ImageError> {
    // Keyed by the dependencies image's content, not only its tag: a tag can come to name
    // another image (prepare adopts a dated resolution under the undated tag; a pruned layer is
    // rebuilt), and an install layer built on the old one must not be reused on the new.
    let deps_id = docker
        .inspect_image(deps)
        .await
        .ok()
        .and_then(|i| i.id)
        .unwrap_or_default();
    let mut h = Sha256::new();
    for part in [
        deps,
        &deps_id,
        INSTALL_DOCKERFILE,
        INSTALL_SH,
        CONTEXT_FORMAT,
    ] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    for name in install_layout(tree) {
        h.update(name.as_bytes());
        h.update([0]);
    }
    let tag = format!("{INSTALL_REPO}:{}", &hex::encode(h.finalize())[..16]);
    if docker.inspect_image(&tag).await.is_ok() {
        image::say(progress, &format!("install image {tag} exists; reusing it"));
        return Ok(tag);
    }
    let mut entries = vec![
        Entry::data(
            "Dockerfile",
            INSTALL_DOCKERFILE.replace("{{DEPS}}", deps),
            0o644,
        ),
        dir("patchloop-opt"),
        Entry::data("patchloop-opt/install.sh", INSTALL_SH, 0o700),
    ];
    entries.extend(workspace_entries(tree.entries.iter().cloned()));
    let options = BuildImageOptionsBuilder::default()
        .dockerfile("Dockerfile")
        .t(&tag)
        .rm(true)
        .forcerm(true)
        .networkmode("none")
        .build();
    image::say(progress, &format!("building install image {tag}"));
    image::run_build(docker, options, entries, "install layer", progress).await?;
    Ok(tag)
}
