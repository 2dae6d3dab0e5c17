//! Shared helpers for the verification tests: the corpus on disk and a fixture image that
//! follows the sandbox image layout contract, built offline on `$PATCHLOOP_TEST_BASE` (what
//! `scripts/test` exports) or `patchloop-probe:base` (python3, pytest and git are all it needs).

#![allow(dead_code)]

pub mod gaming;

use std::path::{Path, PathBuf};

use bollard::Docker;
use futures_util::StreamExt;
use serde::Deserialize;

/// Every task of a bench (`tasks`, `sources`: paths from the crate root), each with its buggy
/// tree materialized from the snapshot in a fresh directory, in turn; how many there were.
pub fn each_task_tree(
    tasks: &str,
    sources: &str,
    mut f: impl FnMut(&patchloop::bench::task::Task, &Path),
) -> usize {
    use patchloop::eval::plan;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tasks = patchloop::bench::task::read_tasks(&root.join(tasks)).unwrap();
    for t in &tasks {
        let dir = tempfile::tempdir().unwrap();
        let snap = plan::find_snapshot(&root.join(sources), t).unwrap();
        plan::materialize(&snap, t, dir.path()).unwrap();
        f(t, dir.path());
    }
    tasks.len()
}

pub fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

#[derive(Debug, Deserialize)]
pub struct CaseMeta {
    pub fail_to_pass: Vec<String>,
    pub verdict: String,
    pub rule: Option<String>,
    /// For `needs_review` cases: a capability the semantic analysis must report.
    #[serde(default)]
    pub capability: Option<String>,
}

pub struct Case {
    pub name: String,
    pub patch: String,
    pub meta: CaseMeta,
}

pub fn cases(kind: &str) -> Vec<Case> {
    let mut out = Vec::new();
    let dir = corpus().join(kind);
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        let patch = String::from_utf8(std::fs::read(p.join("patch.diff")).unwrap()).unwrap();
        let meta: CaseMeta =
            serde_json::from_str(&std::fs::read_to_string(p.join("case.json")).unwrap()).unwrap();
        out.push(Case {
            name: p.file_name().unwrap().to_string_lossy().into_owned(),
            patch,
            meta,
        });
    }
    out
}

pub fn base_image() -> String {
    std::env::var("PATCHLOOP_TEST_BASE")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "patchloop-probe:base".into())
}

const DOCKERFILE: &str = r#"ARG BASE
FROM ${BASE}
ARG BASE
# The patchloop base ends as uid 1000; the fixture's layout is built as root, like prepare's.
USER root
COPY workspace /workspace
RUN set -e; chown -R 0:0 /workspace; cd /workspace; git init -q; git add -A; \
    git -c user.name=p -c user.email=p@example.invalid commit -qm base; \
    mkdir -p /opt/patchloop; cp -a /workspace/.git /opt/patchloop/baseline.git; \
    chown -R 1000:1000 /workspace; cp -al /workspace /opt/patchloop/workspace
USER 1000:1000
LABEL patchloop.tests_dirs="[\"tests\"]" patchloop.test_cmd="python -m pytest" patchloop.base="${BASE}"
"#;

fn add_dir(tar: &mut tar::Builder<Vec<u8>>, src: &Path, dest: &str) {
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let name = format!("{dest}/{}", entry.file_name().to_string_lossy());
        if path.is_dir() {
            if entry.file_name() == "__pycache__" {
                continue;
            }
            add_dir(tar, &path, &name);
        } else {
            let data = std::fs::read(&path).unwrap();
            let mut h = tar::Header::new_gnu();
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            h.set_cksum();
            tar.append_data(&mut h, name, data.as_slice()).unwrap();
        }
    }
}

/// Build (or reuse, through Docker's cache) the fixture image for `fixture/` under `tag`.
pub async fn fixture_image(docker: &Docker, fixture: &Path, tag: &str) {
    let mut tar = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_gnu();
    h.set_size(DOCKERFILE.len() as u64);
    h.set_mode(0o644);
    h.set_cksum();
    tar.append_data(&mut h, "Dockerfile", DOCKERFILE.as_bytes())
        .unwrap();
    add_dir(&mut tar, fixture, "workspace");
    let body = tar.into_inner().unwrap();
    let opts = bollard::query_parameters::BuildImageOptionsBuilder::new()
        .t(tag)
        .buildargs(&std::collections::HashMap::from([(
            "BASE".to_string(),
            base_image(),
        )]))
        .rm(true)
        .forcerm(true)
        .build();
    let mut stream = docker.build_image(opts, None, Some(bollard::body_full(body.into())));
    let mut log = String::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(info) => {
                if let Some(s) = info.stream {
                    log.push_str(&s);
                }
                if let Some(e) = info.error_detail.and_then(|d| d.message) {
                    panic!("fixture image build failed: {e}\n{log}");
                }
            }
            Err(e) => panic!("fixture image build failed: {e}\n{log}"),
        }
    }
}

/// Write `files` (path relative to the tree, text) into a fresh directory and build the
/// fixture image of it under `tag`; the directory is returned to keep it alive.
pub async fn fixture_of(docker: &Docker, files: &[(&str, &str)], tag: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let at = dir.path().join(path);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::write(at, text).unwrap();
    }
    fixture_image(docker, dir.path(), tag).await;
    dir
}

/// `verify::verify` on `patch` in the fixture image `tag` (tests under `tests/`, run with
/// `python -m pytest`), one run before and after, against a base tree holding `base`.
pub async fn verify_fixture(
    docker: &Docker,
    tag: &str,
    patch: &str,
    ids: &[&str],
    fit: patchloop::verify::FitOptions,
    run_id: &str,
    base: &[(&str, &str)],
) -> patchloop::verify::receipt::Receipt {
    verify_fixture_runs(docker, tag, patch, ids, fit, run_id, base, 1).await
}

/// [`verify_fixture`] with `reruns` runs before and after.
#[allow(clippy::too_many_arguments)]
pub async fn verify_fixture_runs(
    docker: &Docker,
    tag: &str,
    patch: &str,
    ids: &[&str],
    fit: patchloop::verify::FitOptions,
    run_id: &str,
    base: &[(&str, &str)],
    reruns: usize,
) -> patchloop::verify::receipt::Receipt {
    let image = patchloop::verify::PreparedImage {
        tag: tag.into(),
        tests_dirs: vec!["tests".into()],
        test_cmd: patchloop::testcmd::TestCommand::parse("python -m pytest").unwrap(),
    };
    let mut req = patchloop::verify::VerifyRequest::new(
        image,
        patch.to_string(),
        ids.iter().map(|s| s.to_string()).collect(),
    );
    req.reruns = reruns;
    req.fit = fit;
    req.run_id = run_id.into();
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in base {
        std::fs::write(dir.path().join(path), text).unwrap();
    }
    let tree = patchloop::verify::policy::DirTree(dir.path().to_path_buf());
    patchloop::verify::verify(docker, &req, &tree).await
}

/// The receipt's row of layer `name`.
pub fn layer<'a>(
    r: &'a patchloop::verify::receipt::Receipt,
    name: &str,
) -> &'a patchloop::verify::receipt::Layer {
    r.layers
        .iter()
        .find(|l| l.layer == name)
        .unwrap_or_else(|| panic!("no layer {name}"))
}

pub async fn remove_image(docker: &Docker, tag: &str) {
    let _ = docker
        .remove_image(
            tag,
            Some(
                bollard::query_parameters::RemoveImageOptionsBuilder::new()
                    .force(true)
                    .build(),
            ),
            None,
        )
        .await;
}
