use super::deps::wheels_tag;
use super::source::source_context;
use super::*;

#[test]
fn two_builds_of_the_same_dependencies_get_their_own_wheels_tags() {
    let hash = "0123456789abcdef0123456789abcdef";
    let (a, b) = (wheels_tag(hash), wheels_tag(hash));
    assert_ne!(a, b, "one removing its tag must not remove the other's");
    for t in [&a, &b] {
        assert!(t.starts_with("patchloop-wheels:0123456789abcdef-"), "{t}");
    }
}

#[test]
fn install_layer_mirrors_ci() {
    use ci::Install;
    let py = ProjectKind::Python;
    assert_eq!(install_layer(py, true, None), InstallLayer::Editable);
    assert_eq!(
        install_layer(py, true, Some(Install::Editable)),
        InstallLayer::Editable
    );
    assert_eq!(
        install_layer(py, true, Some(Install::Checkout)),
        InstallLayer::None
    );
    assert_eq!(
        install_layer(py, true, Some(Install::Built)),
        InstallLayer::EditableForBuilt
    );
    assert_eq!(install_layer(py, false, None), InstallLayer::None);
    assert_eq!(
        install_layer(ProjectKind::Rust, true, Some(Install::Editable)),
        InstallLayer::None
    );
    let mut p = ci::CiPlan::default();
    assert_eq!(ci_test_cmd(&p), None);
    p.pythonpath = vec!["src".into(), ".".into()];
    assert_eq!(
        ci_test_cmd(&p).map(|c| c.written),
        Some("PYTHONPATH=src:. python -m pytest".to_string())
    );
}

fn tree(files: &[&str], dirs: &[&str]) -> SourceTree {
    let mut t = SourceTree::default();
    for f in files {
        if f.ends_with(".py") {
            t.python_files += 1;
        }
        t.entries.push(Entry::File {
            src: PathBuf::from(f),
            dest: f.to_string(),
            mode: 0o644,
        });
    }
    t.dirs = dirs.iter().map(|d| d.to_string()).collect();
    t
}

#[test]
fn dependency_files_are_the_top_level_ones() {
    for f in [
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "requirements.txt",
        "requirements-dev.txt",
    ] {
        assert!(is_dependency_file(f), "{f}");
    }
    for f in [
        "pkg/setup.py",
        "requirements/base.txt",
        "README.md",
        "tox.ini",
    ] {
        assert!(!is_dependency_file(f), "{f}");
    }
}

#[test]
fn labels_are_quoted_and_escaped() {
    assert_eq!(
        label_instruction(&[("a", "python -m pytest"), ("b", r#"["x"] $HOME \"#)]),
        r#"LABEL a="python -m pytest" b="[\"x\"] \$HOME \\""#
    );
}

#[test]
fn install_layout_is_top_level_and_src_names_only() {
    let t = tree(
        &[
            "setup.py",
            "pkg/__init__.py",
            "pkg/mod.py",
            "src/other/__init__.py",
            "tests/t.py",
        ],
        &[],
    );
    let mut with_dirs = t;
    for d in ["pkg", "src", "src/other", "tests"] {
        with_dirs.entries.push(Entry::Dir {
            dest: d.into(),
            mode: 0o755,
        });
    }
    assert_eq!(
        install_layout(&with_dirs),
        vec!["pkg", "setup.py", "src", "src/other", "tests"]
    );
}

#[test]
fn slug_is_tag_safe() {
    assert_eq!(slug("My Project!"), "my-project");
    assert_eq!(slug("toolz-1.2.0"), "toolz-1.2.0");
    assert_eq!(slug("..."), "project");
    assert_eq!(slug(&"a".repeat(99)).len(), 40);
}

#[test]
fn plan_detects_tests_and_defaults_the_command() -> Result<(), ImageError> {
    let t = tree(&["pkg/__init__.py", "tests/test_x.py"], &["pkg", "tests"]);
    let (dirs, cmd) = plan("p", &t, &[], None)?;
    assert_eq!(dirs, vec!["tests"]);
    assert_eq!(cmd.as_str(), "python -m pytest");
    let given = TestCommand::parse("pytest -x").unwrap();
    let (dirs, cmd) = plan("p", &t, &["./pkg/".into(), "pkg".into()], Some(&given))?;
    assert_eq!(dirs, vec!["pkg"]);
    assert_eq!(cmd, given);
    Ok(())
}

#[test]
fn plan_rejects_projects_without_python_or_tests() {
    let no_py = tree(&["README.md"], &["tests"]);
    assert!(matches!(
        plan("p", &no_py, &[], None),
        Err(ImageError::Unsupported { .. })
    ));
    let no_tests = tree(&["pkg/__init__.py"], &["pkg"]);
    let err = plan("p", &no_tests, &[], None);
    assert!(matches!(err, Err(ImageError::NoTests { .. })));
    assert!(
        err.err()
            .map(|e| e.to_string())
            .unwrap_or_default()
            .contains("--tests-dir")
    );
    let t = tree(&["a.py"], &["tests"]);
    assert!(matches!(
        plan("p", &t, &["nope".into()], None),
        Err(ImageError::BadTestsDir { .. })
    ));
    assert!(matches!(
        plan("p", &t, &["../x".into()], None),
        Err(ImageError::BadTestsDir { .. })
    ));
}

#[test]
fn source_context_places_harness_and_workspace() {
    let t = tree(&["a.py"], &[]);
    let entries = source_context("patchloop-deps:x", "LABEL a=\"b\"", t.entries);
    let dests: Vec<String> = entries
        .iter()
        .map(|e| match e {
            Entry::File { dest, .. }
            | Entry::Data { dest, .. }
            | Entry::Dir { dest, .. }
            | Entry::Symlink { dest, .. } => dest.clone(),
        })
        .collect();
    assert!(dests.contains(&"patchloop-opt/harness/pl_guard.py".to_string()));
    assert!(dests.contains(&"workspace/a.py".to_string()));
    match &entries[0] {
        Entry::Data { data, .. } => {
            assert!(String::from_utf8_lossy(data).contains("FROM patchloop-deps:x"))
        }
        other => panic!("first entry must be the Dockerfile, got {other:?}"),
    }
}

#[test]
fn rust_and_node_checkouts_are_planned_without_python_files() -> Result<(), ImageError> {
    let rust = tree(
        &["Cargo.toml", "src/lib.rs", "tests/median.rs"],
        &["src", "tests"],
    );
    assert_eq!(project_kind("p", &rust, None)?, ProjectKind::Rust);
    let (dirs, cmd) = plan_for("p", &rust, ProjectKind::Rust, &[], None)?;
    assert_eq!(
        (dirs, cmd.as_str()),
        (vec!["tests".to_string()], "cargo test")
    );
    let node = tree(
        &["package.json", "src/a.js", "__tests__/a.test.js"],
        &["src", "__tests__"],
    );
    assert_eq!(project_kind("p", &node, None)?, ProjectKind::Node);
    let (dirs, cmd) = plan_for("p", &node, ProjectKind::Node, &[], None)?;
    assert_eq!(
        (dirs, cmd.as_str()),
        (vec!["__tests__".to_string()], "npm test")
    );
    // The given kind wins; nothing known is an error naming --lang.
    assert_eq!(
        project_kind("p", &node, Some(ProjectKind::Rust))?,
        ProjectKind::Rust
    );
    let err = project_kind("p", &tree(&["README.md"], &[]), None).unwrap_err();
    assert!(err.to_string().contains("--lang"), "{err}");
    Ok(())
}

#[test]
fn rust_source_context_compiles_after_the_baseline() {
    let t = tree(&["Cargo.toml"], &[]);
    let entries = source_context_for(ProjectKind::Rust, "d", "LABEL a=\"b\"", t.entries);
    let dockerfile = match &entries[0] {
        Entry::Data { data, .. } => String::from_utf8_lossy(data).into_owned(),
        other => panic!("first entry must be the Dockerfile, got {other:?}"),
    };
    let finalize = dockerfile.find("finalize.sh").unwrap();
    let build = dockerfile.find("rust-build.sh").unwrap();
    assert!(finalize < build, "{dockerfile}");
    let dests: Vec<&str> = entries.iter().map(Entry::dest).collect();
    assert!(dests.contains(&"patchloop-opt/rust-build.sh"));
    assert!(dests.contains(&"patchloop-opt/harness/pl_junit.py"));
    // Python's context is what it was: no build step, no JUnit harness file.
    let py = source_context("d", "LABEL a=\"b\"", tree(&["a.py"], &[]).entries);
    let dests: Vec<&str> = py.iter().map(Entry::dest).collect();
    assert!(
        !dests
            .iter()
            .any(|d| d.contains("rust-build") || d.contains("pl_junit"))
    );
}

#[test]
fn check_dir_rejects_missing_and_non_directories() -> std::io::Result<()> {
    assert!(matches!(
        check_dir(Path::new("/nonexistent/x")),
        Err(ImageError::BadPath { .. })
    ));
    let f = tempfile::NamedTempFile::new()?;
    let err = check_dir(f.path());
    assert!(
        err.err()
            .map(|e| e.to_string())
            .unwrap_or_default()
            .contains("not a directory")
    );
    Ok(())
}

#[test]
fn a_failed_collection_is_told_by_its_error_line_and_exit_status() {
    let f = CollectFailure {
        status: Some(1),
        tail: "Traceback (most recent call last):\n  File \"/opt/venv/lib/python3.11/site-packages/pluggy/_manager.py\", line 448, in _verify_hook\n    raise PluginValidationError(\npluggy._manager.PluginValidationError: Plugin 'conftest.py' for hook 'pytest_collect_file'\nhookimpl definition: pytest_collect_file(file_path, path, parent)\n\n".into(),
    };
    assert_eq!(
        f.error_line(),
        "exit 1: pluggy._manager.PluginValidationError: Plugin 'conftest.py' for hook 'pytest_collect_file'"
    );
    let quiet = CollectFailure {
        status: None,
        tail: "first\nlast words\n".into(),
    };
    assert_eq!(quiet.error_line(), "last words");
}
