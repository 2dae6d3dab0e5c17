//! The source layer: the checkout and the harness committed on top, with the one-commit baseline.

use bollard::Docker;

use super::{PL_JUNIT, dir, workspace_entries};
use crate::sandbox::context::Entry;
use crate::sandbox::image::{self, HARNESS_FILES, ImageError, ProgressFn};
use crate::sandbox::lang::ProjectKind;
use crate::sandbox::layer::LayerContainer;
use crate::sandbox::pydeps;

const SOURCE_DOCKERFILE: &str = include_str!("../../../images/sandbox/source.Dockerfile");

const FINALIZE_SH: &str = include_str!("../../../images/sandbox/finalize.sh");

const RUST_BUILD_SH: &str = include_str!("../../../images/sandbox/rust-build.sh");

const GO_BUILD_SH: &str = include_str!("../../../images/sandbox/go-build.sh");

/// The source layer without `docker build` (source.Dockerfile is the recipe, hashed into the
/// tag): one container from the install image receives the harness and the checkout, runs
/// finalize.sh (and rust-build.sh / go-build.sh) as root without network, and is committed once
/// with the labels and user 1000:1000 (`sandbox::layer`).
pub(super) async fn commit_source(
    docker: &Docker,
    parent: &str,
    kind: ProjectKind,
    labels: &[(&str, &str)],
    entries: Vec<Entry>,
    tag: &str,
    progress: &Option<ProgressFn>,
) -> Result<(String, Option<pydeps::DepsReport>), ImageError> {
    let script = match kind {
        ProjectKind::Rust => {
            "/bin/sh /opt/patchloop/finalize.sh && /bin/sh /opt/patchloop/rust-build.sh"
        }
        ProjectKind::Go => {
            "/bin/sh /opt/patchloop/finalize.sh && /bin/sh /opt/patchloop/go-build.sh"
        }
        _ => "/bin/sh /opt/patchloop/finalize.sh",
    };
    let c = LayerContainer::create(docker, parent, script, SOURCE_STAGE).await?;
    // The build context's layout, rooted at `/`: patchloop-opt/ is /opt/patchloop.
    let moved: Vec<Entry> = entries
        .into_iter()
        .filter_map(|e| {
            e.moved(|dest| match dest {
                "Dockerfile" | "patchloop-opt" => None,
                d => Some(match d.strip_prefix("patchloop-opt/") {
                    Some(rest) => format!("opt/patchloop/{rest}"),
                    None => d.to_string(),
                }),
            })
        })
        .collect();
    c.upload(moved).await?;
    let mut report = None;
    let mut fallback = None;
    c.run(progress, |line| {
        if let Some(f) = line.trim().strip_prefix("patchloop: install fallback: ") {
            fallback = Some(f.to_string());
            return false;
        }
        match pydeps::DepsReport::from_log([line]) {
            Some(r) => {
                report = Some(r);
                true
            }
            None => false,
        }
    })
    .await?;
    // Where the test dependencies came from, and what was left out: not part of the tag (the
    // parent's tag decides them), so they are added here.
    let mut labels: std::collections::HashMap<String, String> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    if let Some(r) = &report {
        labels.insert(pydeps::LABEL_DEPS_SOURCE.into(), r.source.clone());
        labels.insert(
            pydeps::LABEL_DEPS_SKIPPED.into(),
            serde_json::to_string(&r.skipped).unwrap_or_else(|_| "[]".into()),
        );
        let note = match labels.get(image::LABEL_ENV_NOTE) {
            Some(n) => format!("{n}; {}", r.note()),
            None => r.note(),
        };
        labels.insert(image::LABEL_ENV_NOTE.into(), note);
    }
    if let Some(f) = fallback {
        image::say(progress, &format!("note: {f}"));
        let note = match labels.get(image::LABEL_ENV_NOTE) {
            Some(n) => format!("{n}; {f}"),
            None => f,
        };
        labels.insert(image::LABEL_ENV_NOTE.into(), note);
    }
    let id = c
        .commit(tag, Some(crate::sandbox::policy::SANDBOX_USER), labels)
        .await?;
    Ok((id, report))
}

/// The stage name errors and progress lines of [`commit_source`] carry.
const SOURCE_STAGE: &str = "source layer";

/// The source stage's context: Dockerfile, harness files + finalize script (`patchloop-opt/`,
/// copied root-owned to /opt/patchloop) and the checkout under `workspace/`.
#[cfg(test)]
pub(super) fn source_context(deps: &str, labels: &str, tree: Vec<Entry>) -> Vec<Entry> {
    source_context_for(ProjectKind::Python, deps, labels, tree)
}

/// [`source_context`] for a kind: Rust compiles after the baseline commit (rust-build.sh).
pub(super) fn source_context_for(
    kind: ProjectKind,
    deps: &str,
    labels: &str,
    tree: Vec<Entry>,
) -> Vec<Entry> {
    let mut dockerfile = SOURCE_DOCKERFILE
        .replace("{{DEPS}}", deps)
        .replace("{{LABELS}}", labels);
    let build = match kind {
        ProjectKind::Rust => Some(("rust-build.sh", RUST_BUILD_SH)),
        ProjectKind::Go => Some(("go-build.sh", GO_BUILD_SH)),
        _ => None,
    };
    if let Some((name, _)) = build {
        dockerfile = dockerfile.replace(
            "RUN /bin/sh /opt/patchloop/finalize.sh\n",
            &format!("RUN /bin/sh /opt/patchloop/finalize.sh\nRUN /bin/sh /opt/patchloop/{name}\n"),
        );
    }
    let mut entries = vec![
        Entry::data("Dockerfile", dockerfile, 0o644),
        dir("patchloop-opt"),
        Entry::data("patchloop-opt/finalize.sh", FINALIZE_SH, 0o700),
        Entry::Dir {
            dest: "patchloop-opt/harness".into(),
            mode: 0o555,
        },
    ];
    if let Some((name, script)) = build {
        entries.push(Entry::data(format!("patchloop-opt/{name}"), script, 0o700));
    }
    for (name, content) in HARNESS_FILES {
        entries.push(Entry::data(
            format!("patchloop-opt/harness/{name}"),
            *content,
            0o444,
        ));
    }
    // The JUnit harness the agent's `run_tests` calls (the verifier sends its own copy).
    if kind.uses_junit_harness() {
        entries.push(Entry::data(
            "patchloop-opt/harness/pl_junit.py",
            PL_JUNIT,
            0o444,
        ));
    }
    entries.extend(workspace_entries(tree));
    entries
}
