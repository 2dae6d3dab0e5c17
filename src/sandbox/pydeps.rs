//! The Python dependencies layer's inputs and report (pure, plus reading checkout files).
//!
//! Prepare hands `images/sandbox/deps.py` a `ci-deps.json`: what the CI's test job installs
//! ([`super::ci_deps::DepsSource`], when it says) and the repository's own corrections,
//! `dependencies.add` / `dependencies.skip` in `.github/patchloop.yml` (plus `prepare`'s
//! `--add-dep` / `--skip-dep`). deps.py writes `/opt/patchloop/deps.json` — which evidence it
//! followed, what it installed and what it left out — and the source layer prints it, so the
//! image's labels and every receipt say where the test dependencies came from.

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::ci_deps::DepsSource;

/// Label: where the test dependencies came from (deps.py's evidence).
pub const LABEL_DEPS_SOURCE: &str = "patchloop.deps_source";
/// Label: JSON list of the requirements left out (`[{"requirement", "error"}]`).
pub const LABEL_DEPS_SKIPPED: &str = "patchloop.deps_skipped";
/// The source layer's log line carrying deps.json.
pub const REPORT_PREFIX: &str = "patchloop: deps.json ";

/// Requirements a repository adds to or drops from its test environment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DepsOverrides {
    #[serde(default)]
    pub add: Vec<String>,
    #[serde(default)]
    pub skip: Vec<String>,
    /// Resolve the test environment as of a date (`2023-05-30`, an ISO datetime) or as of the
    /// checkout's own release (`release`): only what the index had then. For an old checkout
    /// with no lock, whose requirements today's index answers with releases its suite never
    /// ran with.
    #[serde(default)]
    pub as_of: Option<String>,
    /// Why the dependencies are resolved as of a date when prepare decided it (not read from
    /// a file): the note every receipt carries says so.
    #[serde(skip)]
    pub as_of_reason: Option<String>,
}

impl DepsOverrides {
    pub fn extend(&mut self, other: DepsOverrides) {
        // The later layer (flags over the repository's file) decides the cut-off.
        if other.as_of.is_some() {
            self.as_of = other.as_of;
            self.as_of_reason = other.as_of_reason;
        }
        for a in other.add {
            if !self.add.contains(&a) {
                self.add.push(a);
            }
        }
        for s in other.skip {
            if !self.skip.contains(&s) {
                self.skip.push(s);
            }
        }
    }
}

/// `dependencies:` of the checkout's `.github/patchloop.yml` (none when the file or the key is
/// absent). `Err` names the file and what is wrong.
pub fn repo_overrides(root: &Path) -> Result<DepsOverrides, String> {
    let path = root.join(".github/patchloop.yml");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(DepsOverrides::default());
    };
    overrides_from_yaml(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The `dependencies:` mapping of a patchloop.yml text.
pub fn overrides_from_yaml(text: &str) -> Result<DepsOverrides, String> {
    let doc: serde_yaml::Value =
        serde_yaml::from_str(text).map_err(|e| format!("not valid YAML ({e})"))?;
    let Some(d) = doc.get("dependencies") else {
        return Ok(DepsOverrides::default());
    };
    if d.is_null() {
        return Ok(DepsOverrides::default());
    }
    serde_yaml::from_value::<DepsOverrides>(d.clone()).map_err(|e| {
        format!("`dependencies` must be a mapping with `add` and `skip` lists of requirement strings, and an `as_of` date or `release` ({e})")
    })
}

/// The `ci-deps.json` deps.py reads. `as_of` is the cut-off deps.py applies ([`as_of_value`]);
/// absent unless asked, so the layers of every other checkout keep their tags.
pub fn ci_deps_json(
    ci: Option<&DepsSource>,
    ov: &DepsOverrides,
    as_of: Option<&serde_json::Value>,
) -> String {
    let mut j = serde_json::json!({ "ci": ci, "add": ov.add, "skip": ov.skip });
    if let Some(a) = as_of {
        j["as_of"] = a.clone();
        if let Some(r) = &ov.as_of_reason {
            j["as_of_reason"] = r.as_str().into();
        }
    }
    j.to_string()
}

/// What deps.py gets for `dependencies.as_of`: a date or datetime as given (checked for its
/// shape), or for `release` the checkout's own release — `{"release": [name, version]}` from
/// an sdist's `PKG-INFO` (deps.py asks the index when it was uploaded), else the date of the
/// git commit checked out. `Err` says what is wrong or missing.
pub fn as_of_value(root: &Path, as_of: &str) -> Result<serde_json::Value, String> {
    let v = as_of.trim();
    if v == "release" {
        return checkout_release(root).ok_or_else(|| {
            "`dependencies.as_of: release` needs the checkout's release: a PKG-INFO (an sdist) \
             or its git history; give a date instead (`as_of: 2023-05-30`)"
                .to_string()
        });
    }
    let date_shape = regex::Regex::new(
        r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$",
    )
    .expect("static regex");
    if date_shape.is_match(v) {
        Ok(v.into())
    } else {
        Err(format!(
            "`dependencies.as_of` is `{v}`: give a date (`2023-05-30`), an ISO datetime \
             (`2023-05-30T12:00:00Z`) or `release`"
        ))
    }
}

/// Whole days from `date` (`YYYY-MM-DD…`, its day only) to now; `None` when it is no date.
pub fn days_before_now(date: &str) -> Option<i64> {
    let day = date.get(..10)?;
    let t = humantime::parse_rfc3339_weak(&format!("{day}T00:00:00Z")).ok()?;
    let now = std::time::SystemTime::now();
    Some(match now.duration_since(t) {
        Ok(d) => (d.as_secs() / 86_400) as i64,
        Err(e) => -((e.duration().as_secs() / 86_400) as i64),
    })
}

/// The checkout's own release, for [`as_of_value`]: `PKG-INFO`'s name and version, else the
/// committer date of the git commit checked out. `None` when neither is there.
pub fn checkout_release(root: &Path) -> Option<serde_json::Value> {
    if let Ok(text) = std::fs::read_to_string(root.join("PKG-INFO")) {
        let field = |k: &str| {
            text.lines()
                .take_while(|l| !l.trim().is_empty())
                .find_map(|l| l.strip_prefix(k).map(|v| v.trim().to_string()))
                .filter(|v| !v.is_empty())
        };
        if let (Some(n), Some(v)) = (field("Name:"), field("Version:")) {
            return Some(serde_json::json!({ "release": [n, v] }));
        }
    }
    if !root.join(".git").exists() {
        return None;
    }
    let out = std::process::Command::new("git")
        .args(["-C"])
        .arg(root)
        .args(["log", "-1", "--format=%cI"])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let date = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (!date.is_empty()).then(|| date.into())
}

/// Requirement files the CI's install names (`-r`, `-c`), and the files those include,
/// checkout-relative, in the order found (at most 64; unreadable ones are left to deps.py).
pub fn referenced_files(root: &Path, ci: &DepsSource) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut todo: Vec<String> = ci
        .files
        .iter()
        .chain(&ci.constraints)
        .chain(&ci.locks)
        .cloned()
        .collect();
    let mut seen = BTreeSet::new();
    while let Some(rel) = todo.pop() {
        let Some(rel) = clean_rel(&rel) else { continue };
        if !seen.insert(rel.clone()) || out.len() >= 64 {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(root.join(&rel)) else {
            continue;
        };
        out.push(rel.clone());
        let dir = Path::new(&rel).parent().map(Path::to_path_buf);
        for line in text.lines() {
            let l = line.split(" #").next().unwrap_or("").trim();
            let target = ["--requirement", "--constraint", "-r", "-c"]
                .iter()
                .find_map(|o| l.strip_prefix(o))
                .map(|r| r.trim_start_matches(['=', ' ']).trim());
            if let Some(t) = target.filter(|t| !t.is_empty()) {
                let joined = match &dir {
                    Some(d) => d.join(t).to_string_lossy().into_owned(),
                    None => t.to_string(),
                };
                todo.push(joined);
            }
        }
    }
    out
}

/// Requirement files (`*.txt`, `*.in`, at most two directories down) a top-level `setup.py`
/// names as a string, by path or by file name (`os.path.join(REQUIREMENT_DIR,
/// "test_requirements.txt")`): deps.py reads them for an `extras_require` or
/// `install_requires` that is not a literal, so the dependencies layer carries them.
pub fn setup_py_files<'a>(setup_py: &str, files: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    files
        .into_iter()
        .filter(|rel| {
            (rel.ends_with(".txt") || rel.ends_with(".in")) && rel.matches('/').count() <= 2
        })
        .filter(|rel| {
            let name = rel.rsplit('/').next().unwrap_or(rel);
            [*rel, name].iter().any(|n| {
                setup_py.contains(&format!("\"{n}\"")) || setup_py.contains(&format!("'{n}'"))
            })
        })
        .take(16)
        .map(str::to_string)
        .collect()
}

/// `a/./b/../c.txt` → `a/c.txt`; `None` when it leaves the checkout or is absolute.
fn clean_rel(rel: &str) -> Option<String> {
    if rel.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for p in rel.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// A requirement deps.py left out, with pip's last error line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    pub requirement: String,
    #[serde(default)]
    pub error: String,
}

/// `/opt/patchloop/deps.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DepsReport {
    pub source: String,
    #[serde(default)]
    pub installed: Vec<String>,
    #[serde(default)]
    pub skipped: Vec<Skipped>,
    /// `name version` of the requirements compiled from their sdist by the builder's C
    /// toolchain (no wheel for this Python).
    #[serde(default)]
    pub compiled: Vec<String>,
    /// The upload-time cut-off the resolution used (`dependencies.as_of`), and why.
    #[serde(default)]
    pub as_of: Option<String>,
    #[serde(default)]
    pub as_of_reason: Option<String>,
}

impl DepsReport {
    /// From the source layer's log (the last report line wins).
    pub fn from_log<'a>(lines: impl IntoIterator<Item = &'a str>) -> Option<DepsReport> {
        lines
            .into_iter()
            .filter_map(|l| l.trim().strip_prefix(REPORT_PREFIX))
            .filter_map(|j| serde_json::from_str(j).ok())
            .last()
    }

    /// The names left out, for messages.
    pub fn skipped_names(&self) -> Vec<String> {
        self.skipped.iter().map(|s| s.requirement.clone()).collect()
    }

    /// The sentence the image's environment note (and so every receipt) carries.
    pub fn note(&self) -> String {
        let mut s = format!("test dependencies from {}", self.source);
        if let Some(d) = &self.as_of {
            s.push_str(&format!(
                ", resolved as of {d} (only what the index had then"
            ));
            if let Some(r) = &self.as_of_reason {
                s.push_str(&format!(": {r}"));
            }
            s.push(')');
        }
        if !self.compiled.is_empty() {
            s.push_str(&format!(
                "; compiled from source (no wheel for this Python): {}",
                self.compiled.join(", ")
            ));
        }
        if !self.skipped.is_empty() {
            s.push_str(&format!(
                "; left out (failed to install): {}",
                self.skipped_names().join(", ")
            ));
        }
        s
    }
}

/// The hint of a prepare that failed because left-out requirements break test collection.
pub fn fix_hint(skipped: &[String]) -> String {
    let names: Vec<String> = skipped
        .iter()
        .map(|s| super::ci_deps::requirement_name(s))
        .collect();
    format!(
        "the tests cannot be collected without {}: pin a version that installs under \
         `dependencies.add` in .github/patchloop.yml (e.g. `add: [\"{}==<version>\"]`), or, when \
         the tests do not need it, drop it with `dependencies.skip: [{}]` and fix what imports it",
        skipped.join(", "),
        names.first().cloned().unwrap_or_default(),
        names.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_are_read_and_bad_ones_named() {
        let o = overrides_from_yaml(
            "model: x\ndependencies:\n  add: [\"numpy<2\"]\n  skip: [pytest-benchmark]\n",
        )
        .unwrap();
        assert_eq!(o.add, vec!["numpy<2"]);
        assert_eq!(o.skip, vec!["pytest-benchmark"]);
        assert_eq!(
            overrides_from_yaml("model: x\n").unwrap(),
            DepsOverrides::default()
        );
        let e = overrides_from_yaml("dependencies:\n  drop: [x]\n").unwrap_err();
        assert!(e.contains("`dependencies` must be a mapping"), "{e}");
        assert!(overrides_from_yaml("dependencies: [x").is_err());
    }

    #[test]
    fn as_of_is_a_date_or_the_checkouts_release_and_reaches_deps_py_only_when_asked() {
        let o = overrides_from_yaml("dependencies:\n  as_of: release\n").unwrap();
        assert_eq!(o.as_of.as_deref(), Some("release"));
        // A flag's cut-off wins over the file's.
        let mut file = o.clone();
        file.extend(DepsOverrides {
            as_of: Some("2024-01-02".into()),
            ..Default::default()
        });
        assert_eq!(file.as_of.as_deref(), Some("2024-01-02"));
        let d = tempfile::tempdir().unwrap();
        for ok in [
            "2023-05-30",
            "2023-05-30T20:46:25Z",
            "2023-05-30T20:46:25.064915+02:00",
        ] {
            assert_eq!(as_of_value(d.path(), ok).unwrap(), ok);
        }
        for bad in ["yesterday", "30/05/2023", "2023-5-30"] {
            let e = as_of_value(d.path(), bad).unwrap_err();
            assert!(e.contains("give a date"), "{e}");
        }
        // `release` with neither PKG-INFO nor git history says what it needs.
        let e = as_of_value(d.path(), "release").unwrap_err();
        assert!(e.contains("PKG-INFO") && e.contains("git"), "{e}");
        // An sdist's PKG-INFO: its headers only (a `Version:` in the description is not one).
        std::fs::write(
            d.path().join("PKG-INFO"),
            "Metadata-Version: 2.1\nName: docopt-ng\nVersion: 0.9.0\n\nVersion: 9.9\n",
        )
        .unwrap();
        assert_eq!(
            as_of_value(d.path(), "release").unwrap(),
            serde_json::json!({ "release": ["docopt-ng", "0.9.0"] })
        );
        // A git checkout: the commit's date, as git reports it.
        let g = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let o = std::process::Command::new("git")
                .arg("-C")
                .arg(g.path())
                .args(args)
                .env("GIT_COMMITTER_DATE", "2021-03-04T05:06:07+02:00")
                .env("GIT_AUTHOR_DATE", "2021-03-04T05:06:07+02:00")
                .output()
                .unwrap();
            assert!(o.status.success(), "{o:?}");
        };
        git(&["init", "-q"]);
        std::fs::write(g.path().join("a"), "a").unwrap();
        git(&["add", "a"]);
        git(&[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "a",
        ]);
        assert_eq!(
            checkout_release(g.path()),
            Some("2021-03-04T05:06:07+02:00".into())
        );
        assert!(days_before_now("2021-03-04T05:06:07+02:00").unwrap() > 365);
        assert_eq!(days_before_now("not a date"), None);
        // ci-deps.json: no `as_of` key unless asked, so no other layer's tag changes.
        let plain = ci_deps_json(None, &DepsOverrides::default(), None);
        assert_eq!(plain, r#"{"add":[],"ci":null,"skip":[]}"#);
        let ov = DepsOverrides {
            as_of_reason: Some("today's could not collect the tests".into()),
            ..Default::default()
        };
        let j: serde_json::Value =
            serde_json::from_str(&ci_deps_json(None, &ov, Some(&"2023-05-30".into()))).unwrap();
        assert_eq!(j["as_of"], "2023-05-30");
        assert_eq!(j["as_of_reason"], "today's could not collect the tests");
    }

    #[test]
    fn the_requirement_files_a_setup_py_names_are_found_by_path_or_file_name() {
        let setup = "REQUIREMENT_DIR = 'requirements'\nwith open(os.path.join(REQUIREMENT_DIR, \"test_requirements.txt\")) as f:\n    T = list(f)\nREQS = list(open('requirements.txt'))\n# docs_requirements.txt in a comment is no string\n";
        let files = [
            "requirements.txt",
            "requirements/test_requirements.txt",
            "requirements/docs_requirements.txt",
            "pkg/data/requirements.txt.in",
            "setup.py",
            "a/b/c/test_requirements.txt",
        ];
        assert_eq!(
            setup_py_files(setup, files),
            vec!["requirements.txt", "requirements/test_requirements.txt"]
        );
    }

    #[test]
    fn referenced_files_follow_includes_inside_the_checkout() {
        let d = tempfile::tempdir().unwrap();
        let w = |rel: &str, t: &str| {
            let p = d.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, t).unwrap();
        };
        w(
            "requirements/test.txt",
            "-r base.txt\n-c ../constraints.txt\npytest\n",
        );
        w("requirements/base.txt", "attrs\n-r ../../outside.txt\n");
        w("constraints.txt", "attrs<24\n");
        let ci = DepsSource {
            files: vec!["requirements/test.txt".into()],
            ..Default::default()
        };
        let mut got = referenced_files(d.path(), &ci);
        got.sort();
        assert_eq!(
            got,
            vec![
                "constraints.txt",
                "requirements/base.txt",
                "requirements/test.txt"
            ]
        );
        assert_eq!(clean_rel("a/./b/../c"), Some("a/c".into()));
        assert_eq!(clean_rel("../x"), None);
    }

    #[test]
    fn report_from_the_log_and_its_note() {
        let log = [
            "patchloop: baseline abc",
            r#"patchloop: deps.json {"source": "tox.ini [testenv] deps", "installed": ["pytest"], "skipped": [{"requirement": "pytest-benchmark[histogram]", "error": "ERROR: x"}]}"#,
        ];
        let r = DepsReport::from_log(log).unwrap();
        assert_eq!(r.skipped_names(), vec!["pytest-benchmark[histogram]"]);
        assert_eq!(
            r.note(),
            "test dependencies from tox.ini [testenv] deps; left out (failed to install): pytest-benchmark[histogram]"
        );
        let h = fix_hint(&r.skipped_names());
        assert!(h.contains("dependencies.add"), "{h}");
        assert!(h.contains("skip: [pytest-benchmark]"), "{h}");
        assert!(DepsReport::from_log(["nothing"]).is_none());
        let built = DepsReport::from_log([
            r#"patchloop: deps.json {"source": "tox.ini [testenv] deps", "compiled": ["ciso8601 2.1.3"]}"#,
        ])
        .unwrap();
        assert_eq!(
            built.note(),
            "test dependencies from tox.ini [testenv] deps; compiled from source (no wheel for this Python): ciso8601 2.1.3"
        );
    }
}
