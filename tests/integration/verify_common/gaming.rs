//! The gaming corpus (`tests/corpus/gaming/`, built and checked by its `check.py`): cases, their
//! buggy trees on the host, and the class × layer table the verifier's generalisation layers
//! are measured by.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use patchloop::verify::fit::FitInput;
use patchloop::verify::oracle::{self, TestSource};
use serde::Deserialize;

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/gaming")
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[derive(Debug, Clone, Deserialize)]
pub struct Meta {
    pub library: String,
    pub source: String,
    pub fail_to_pass: Vec<String>,
    #[serde(default)]
    pub pass_to_pass_sample: Vec<String>,
    pub kind: String,
    pub class: String,
    pub wrong_on: String,
    pub test_command: String,
}

#[derive(Debug, Clone)]
pub struct Case {
    pub id: String,
    pub meta: Meta,
    pub bug: String,
    pub patch: String,
    /// The upstream fix of the same bug (what the gaming patch should have been).
    pub gold: String,
}

impl Case {
    pub fn gaming(&self) -> bool {
        self.meta.kind == "gaming"
    }
}

/// The cases a Docker test runs: every case under `PATCHLOOP_GAMING=all` (or those
/// `PATCHLOOP_GAMING_ONLY` picks), else `subset`, each of which must exist; and whether it
/// is the whole corpus.
pub fn selected(subset: &[&str]) -> (Vec<Case>, bool) {
    let all = std::env::var("PATCHLOOP_GAMING").is_ok_and(|v| v == "all")
        || std::env::var("PATCHLOOP_GAMING_ONLY").is_ok();
    let cases: Vec<Case> = cases()
        .into_iter()
        .filter(|c| all || subset.contains(&c.id.as_str()))
        .collect();
    if !all {
        assert_eq!(cases.len(), subset.len(), "a subset case is missing");
    }
    (cases, all)
}

/// Every case, sorted by id; `PATCHLOOP_GAMING_ONLY=substring[,substring…]` keeps the matching
/// ones.
pub fn cases() -> Vec<Case> {
    let dir = root().join("cases");
    let mut ids: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| dir.join(n).join("case.json").is_file())
        .collect();
    ids.sort();
    let only = std::env::var("PATCHLOOP_GAMING_ONLY").ok();
    ids.into_iter()
        .filter(|id| {
            only.as_ref()
                .is_none_or(|o| o.split(',').any(|o| id.contains(o.trim())))
        })
        .map(|id| {
            let d = dir.join(&id);
            let read = |f: &str| {
                std::fs::read_to_string(d.join(f))
                    .unwrap_or_else(|e| panic!("{}/{f}: {e}", d.display()))
            };
            Case {
                meta: serde_json::from_str(&read("case.json"))
                    .unwrap_or_else(|e| panic!("{id}/case.json: {e}")),
                bug: read("bug.diff"),
                patch: read("patch.diff"),
                gold: read("gold.diff"),
                id,
            }
        })
        .collect()
}

/// The case's buggy tree in `dest`: the pinned sdist, then `bug.diff`.
pub fn buggy_tree(c: &Case, dest: &Path) {
    let tgz = repo().join(&c.meta.source);
    let f = std::fs::File::open(&tgz).unwrap_or_else(|e| panic!("{}: {e}", tgz.display()));
    tar::Archive::new(flate2::read::GzDecoder::new(f))
        .unpack(dest)
        .unwrap();
    for (path, text) in apply(dest, &c.bug) {
        std::fs::write(dest.join(path), text).unwrap();
    }
}

/// The case's buggy tree in `work/<prefix>-<library>` (named by library: the image tag's
/// readable part, and what a test's cleanup matches), prepared into an image as `patchloop
/// eval` does with the case's test command. Panics with the case id when preparing fails.
pub async fn prepared(
    d: &bollard::Docker,
    c: &Case,
    work: &Path,
    prefix: &str,
) -> (PathBuf, patchloop::sandbox::prepare::PreparedImage) {
    use patchloop::sandbox::prepare::{PrepareOptions, prepare};
    let tree = work.join(format!("{prefix}-{}", c.meta.library));
    std::fs::create_dir_all(&tree).unwrap();
    buggy_tree(c, &tree);
    let image = prepare(
        d,
        &PrepareOptions {
            path: tree.clone(),
            test_cmd: Some(patchloop::testcmd::TestCommand::parse(&c.meta.test_command).unwrap()),
            ..Default::default()
        },
    )
    .await
    .unwrap_or_else(|e| panic!("{}: preparing: {e:#}", c.id));
    (tree, image)
}

/// The files a patch changes, applied to `tree` in memory (added files start empty).
pub fn apply(tree: &Path, patch: &str) -> BTreeMap<String, String> {
    use patchloop::verify::apply;
    let mut files = BTreeMap::new();
    for fp in apply::parse(patch).unwrap() {
        let text = std::fs::read_to_string(tree.join(&fp.path)).unwrap_or_default();
        files.insert(fp.path.clone(), text);
    }
    apply::apply(patch, &files).unwrap_or_else(|e| panic!("{e}"))
}

/// A patch's changed Python files, before and after, from the buggy tree on the host (what
/// the repair search hands the candidates' comparison).
pub fn changed_files(tree: &Path, patch: &str) -> Vec<patchloop::verify::signals::ChangedFile> {
    apply(tree, patch)
        .into_iter()
        .filter(|(p, _)| p.ends_with(".py"))
        .map(|(path, post)| {
            let pre = std::fs::read_to_string(tree.join(&path)).ok();
            let (removed, added) =
                patchloop::verify::fit::line_changes(pre.as_deref().unwrap_or(""), &post);
            patchloop::verify::signals::ChangedFile {
                path,
                pre,
                post,
                added,
                removed,
            }
        })
        .collect()
}

/// What the verifier reads for the pure layers, from the buggy tree on the host.
pub fn fit_input(c: &Case, tree: &Path, tests_dirs: &[String]) -> FitInput {
    let files = patchloop::verify::diff::parse(&c.patch).unwrap();
    let post_texts = apply(tree, &c.patch);
    let read = |p: &str| std::fs::read_to_string(tree.join(p)).ok();
    let mut pre = BTreeMap::new();
    let mut post = BTreeMap::new();
    for f in &files {
        if let Some(o) = &f.old_path {
            pre.insert(o.clone(), read(o));
        }
        if let Some(n) = &f.new_path {
            post.insert(n.clone(), post_texts.get(n).cloned());
        }
    }
    let tests = oracle::test_files(&c.meta.fail_to_pass)
        .into_iter()
        .filter_map(|p| {
            Some(TestSource {
                text: read(&p)?,
                path: p,
            })
        })
        .collect();
    FitInput::new(&files, &pre, &post, tests, &c.meta.fail_to_pass, tests_dirs)
}

/// Per class: gaming cases and the ones each layer (and all of them) stopped; genuine cases
/// and the ones each layer flagged.
#[derive(Debug, Default)]
pub struct Table {
    /// (class, kind) → (cases, per layer flagged, any layer flagged, ids flagged)
    pub rows: BTreeMap<(String, String), Row>,
}

#[derive(Debug, Default, Clone)]
pub struct Row {
    pub cases: usize,
    pub by_layer: BTreeMap<String, usize>,
    pub any: usize,
    pub flagged: Vec<String>,
    pub missed: Vec<String>,
}

/// The columns: the generalisation layers, then `verdict` (not `verified` end to end, when
/// the table comes from full verifications).
pub fn columns() -> Vec<String> {
    patchloop::verify::layers::LAYERS
        .iter()
        .map(|l| l.layer().as_str().to_string())
        .collect()
}

impl Table {
    /// One case's result: the layers with a finding, and whether it was stopped overall.
    pub fn add(&mut self, c: &Case, layers: &BTreeSet<String>, stopped: bool) {
        let row = self
            .rows
            .entry((c.meta.class.clone(), c.meta.kind.clone()))
            .or_default();
        row.cases += 1;
        for l in layers {
            *row.by_layer.entry(l.clone()).or_default() += 1;
        }
        if stopped {
            row.any += 1;
            row.flagged.push(c.id.clone());
        } else {
            row.missed.push(c.id.clone());
        }
    }

    pub fn totals(&self, kind: &str) -> (usize, usize) {
        self.rows
            .iter()
            .filter(|((_, k), _)| k == kind)
            .fold((0, 0), |(n, s), (_, r)| (n + r.cases, s + r.any))
    }

    /// Markdown: one row per class and kind, one column per layer, then the overall column
    /// (`stopped` for gaming: not `verified`; `flagged` for genuine: a false flag).
    pub fn markdown(&self, overall: &str) -> String {
        let cols = columns();
        let mut s = format!(
            "| class | kind | cases | {} | {overall} |\n|---|---|---:|{}---:|\n",
            cols.join(" | "),
            "---:|".repeat(cols.len())
        );
        for ((class, kind), r) in &self.rows {
            let cells: Vec<String> = cols
                .iter()
                .map(|c| r.by_layer.get(c).copied().unwrap_or(0).to_string())
                .collect();
            s.push_str(&format!(
                "| {class} | {kind} | {} | {} | {} |\n",
                r.cases,
                cells.join(" | "),
                r.any
            ));
        }
        for kind in ["gaming", "genuine"] {
            let (n, k) = self.totals(kind);
            s.push_str(&format!("| **all** | {kind} | {n} | {} | {k} |\n", {
                let cells: Vec<String> = cols
                    .iter()
                    .map(|c| {
                        self.rows
                            .iter()
                            .filter(|((_, kk), _)| kk == kind)
                            .map(|(_, r)| r.by_layer.get(c).copied().unwrap_or(0))
                            .sum::<usize>()
                            .to_string()
                    })
                    .collect();
                cells.join(" | ")
            }));
        }
        s
    }
}
