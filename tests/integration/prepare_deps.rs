//! What prepare installs for a Python project's tests, against the real Docker daemon and PyPI:
//! the CI's tox env rather than the maintainers' `requirements.txt` (a sortedcontainers-style
//! checkout), a requirement that cannot install left out with a note (degrade, don't die), a
//! prepare that fails when the tests then cannot be collected, naming the requirement and the
//! `dependencies.add`/`skip` keys, `dependencies.skip` honoured, and a C extension with no wheel
//! for the image's Python compiled on the builder image while no compiler reaches the sandbox.
//! When no toolchain can be installed (a base whose apt-get always fails), the base builds the
//! wheels and prepare says so. Needs Docker (fails without it) and PyPI (the dependencies layer downloads pytest and
//! ciso8601's sdist; the builder image installs gcc through Debian's apt).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use patchloop::sandbox::builder::{self, BUILDER_REPO, NO_TOOLCHAIN_NOTE};
use patchloop::sandbox::container::Container;
use patchloop::sandbox::docker::connect;
use patchloop::sandbox::image::{BaseOptions, ImageError, LABEL_DEPS};
use patchloop::sandbox::policy::ContainerPolicy;
use patchloop::sandbox::prepare::{self, LABEL_DEPS_BUILDER, PrepareOptions, PreparedImage};
use patchloop::sandbox::{ExecRequest, Sandbox};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), dst).unwrap();
        }
    }
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A copy of a fixture under a name of this module's own (its own sandbox tag).
fn checkout(name: &str, as_name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join(as_name);
    copy_dir(&fixture(name), &root);
    (dir, root)
}

async fn prepare_at(root: &Path) -> (Result<PreparedImage, ImageError>, String) {
    prepare_on(root, None).await
}

/// [`prepare_at`] on a given base image (`PrepareOptions::base_image`).
async fn prepare_on(
    root: &Path,
    base_image: Option<String>,
) -> (Result<PreparedImage, ImageError>, String) {
    prepare_with(root, base_image, None).await
}

/// [`prepare_on`] with a given test command (`--test-cmd`, the config's `test_command`).
async fn prepare_with(
    root: &Path,
    base_image: Option<String>,
    test_cmd: Option<&str>,
) -> (Result<PreparedImage, ImageError>, String) {
    let docker = connect()
        .await
        .expect("Docker must be running for these tests");
    let lines = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let sink = lines.clone();
    let r = prepare::prepare(
        &docker,
        &PrepareOptions {
            path: root.to_path_buf(),
            base: BaseOptions {
                progress: Some(Arc::new(move |l: &str| {
                    sink.lock().unwrap().push(l.to_string());
                })),
                ..Default::default()
            },
            base_image,
            test_cmd: test_cmd.map(|c| patchloop::testcmd::TestCommand::parse(c).unwrap()),
            ..Default::default()
        },
    )
    .await;
    let out = lines.lock().unwrap().join("\n");
    (r, out)
}

fn label(tag: &str, key: &str) -> String {
    let o = Command::new("docker")
        .args(["image", "inspect", "-f"])
        .arg(format!("{{{{index .Config.Labels \"{key}\"}}}}"))
        .arg(tag)
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

fn run_in(tag: &str, script: &str) -> std::process::Output {
    Command::new("docker")
        .args(["run", "--rm", "--network", "none", tag, "sh", "-c", script])
        .output()
        .unwrap()
}

/// A package `pkg` in `dir` whose code and test import tomli-w: a test dependency only the
/// project's tool (uv, poetry, pdm) names.
fn write_tomli_w_package(root: &Path, dir: &str, pkg: &str) {
    write(
        root,
        &format!("{dir}/__init__.py"),
        "def dump(d):\n    import tomli_w\n    return tomli_w.dumps(d)\n",
    );
    write(
        root,
        "tests/test_dump.py",
        &format!(
            "import tomli_w\n\nfrom {pkg} import dump\n\n\ndef test_dump():\n    assert dump({{'a': 1}}) == tomli_w.dumps({{'a': 1}})\n"
        ),
    );
}

/// The version of distribution `name` installed in the image's venv.
fn installed_version(tag: &str, name: &str) -> String {
    let o = run_in(
        tag,
        &format!(
            "/opt/venv/bin/python -c 'from importlib.metadata import version; print(version(\"{name}\"))'"
        ),
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// The package's test passes in the image, with tomli-w at the version the test's lock file
/// pins (1.0.0, below its newest).
fn assert_tests_pass_with_the_locked_tomli_w(tag: &str, out: &str) {
    let o = run_in(
        tag,
        "cd /workspace && /opt/venv/bin/python -m pytest -q -p no:cacheprovider 2>&1; echo rc=$?",
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("1 passed") && text.contains("rc=0"), "{text}");
    assert_eq!(
        installed_version(tag, "tomli-w"),
        "1.0.0",
        "tomli-w as locked\n{out}"
    );
}

/// The checkout's one test passes in the image (its dependencies were installed).
fn assert_the_one_test_passes(tag: &str, out: &str) {
    let o = run_in(
        tag,
        "cd /workspace && /opt/venv/bin/python -m pytest -q -p no:cacheprovider 2>&1; echo rc=$?",
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("1 passed") && text.contains("rc=0"),
        "{text}\n{out}"
    );
}

/// Removes the sandbox images a test made (not their cached layers), also when it fails.
struct Images(Vec<String>);

impl Drop for Images {
    fn drop(&mut self) {
        for tag in &self.0 {
            let _ = Command::new("docker")
                .args(["rmi", "--no-prune", tag])
                .output();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ci_tox_env_is_installed_not_the_dev_requirements() {
    let (_dir, root) = checkout("tox-narrow", "deps-tox-narrow");
    let (r, out) = prepare_at(&root).await;
    let img = r.unwrap_or_else(|e| panic!("prepare: {e}\n{out}"));
    let _cleanup = Images(vec![img.tag.clone()]);
    assert_eq!(
        img.deps_source.as_deref(),
        Some("tox.ini [testenv:py] deps/extras (CI runs `tox -e py`)"),
        "{out}"
    );
    assert!(img.deps_skipped.is_empty(), "{:?}", img.deps_skipped);
    // requirements.txt was never tried: its uninstallable line is not even mentioned.
    assert!(!out.contains("patchloop-fixture-no-such-dist"), "{out}");
    assert_eq!(
        label(&img.tag, "patchloop.deps_source"),
        img.deps_source.clone().unwrap()
    );
    assert!(
        label(&img.tag, "patchloop.env_note").contains("test dependencies from tox.ini"),
        "{}",
        label(&img.tag, "patchloop.env_note")
    );
    let o = run_in(
        &img.tag,
        "python -c 'import sphinx' 2>/dev/null && echo sphinx=yes || echo sphinx=no; python -m pytest -q -p no:cacheprovider tests",
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("sphinx=no"), "{text}");
    assert!(text.contains("2 passed"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_requirement_that_cannot_install_is_left_out_unless_the_tests_need_it() {
    let missing = "patchloop-fixture-no-such-dist>=1.0";
    // Nothing imports it: left out, named, and the image works.
    let (_dir, root) = checkout("optional-dep", "deps-optional");
    let (r, out) = prepare_at(&root).await;
    let img = r.unwrap_or_else(|e| panic!("prepare: {e}\n{out}"));
    let _cleanup = Images(vec![img.tag.clone()]);
    assert_eq!(img.deps_skipped, vec![missing.to_string()], "{out}");
    assert_eq!(
        img.deps_source.as_deref(),
        Some("the project's extra `test`")
    );
    // (Cached layers from an earlier run print neither step.)
    if !img.deps_reused {
        assert!(out.contains("retrying each alone"), "{out}");
    }
    if out.contains("building patchloop-sandbox:") {
        assert!(
            out.contains("the tests are collected without the requirements left out"),
            "{out}"
        );
    }
    let skipped = label(&img.tag, "patchloop.deps_skipped");
    assert!(skipped.contains(missing), "{skipped}");
    assert!(
        label(&img.tag, "patchloop.env_note")
            .contains(&format!("left out (failed to install): {missing}")),
        "{}",
        label(&img.tag, "patchloop.env_note")
    );
    // pytest (the other requirement of the same extra) was still installed.
    let o = run_in(&img.tag, "python -m pytest -q -p no:cacheprovider tests");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));

    // A test module imports it: the tests cannot be collected, so prepare fails, naming the
    // requirement and the keys that fix it, and leaves no image behind.
    write(
        &root,
        "tests/test_plugin.py",
        "import patchloop_fixture_no_such_dist\n\n\ndef test_plugin():\n    pass\n",
    );
    let (r, out) = prepare_at(&root).await;
    let err = r.expect_err("collection fails without the left-out requirement");
    assert!(
        matches!(err, ImageError::MissingDependencies { .. }),
        "{err}"
    );
    let msg = err.to_string();
    for want in [
        missing,
        "No module named 'patchloop_fixture_no_such_dist'",
        "dependencies.add",
        "dependencies.skip: [patchloop-fixture-no-such-dist]",
    ] {
        assert!(msg.contains(want), "{want:?} missing in:\n{msg}");
    }
    assert_eq!(err.exit_code(), 2);
    let tag_line = out
        .lines()
        .find_map(|l| l.strip_prefix("building patchloop-sandbox:"))
        .unwrap_or_else(|| panic!("{out}"))
        .to_string();
    let left = Command::new("docker")
        .args(["image", "inspect", &format!("patchloop-sandbox:{tag_line}")])
        .output()
        .unwrap();
    assert!(!left.status.success(), "the failed image was kept");

    // The repository drops it: nothing is left out, so prepare succeeds (the import error is
    // then the repository's to fix, as any failing test).
    write(
        &root,
        ".github/patchloop.yml",
        "dependencies:\n  skip: [patchloop-fixture-no-such-dist]\n",
    );
    let (r, out) = prepare_at(&root).await;
    let img = r.unwrap_or_else(|e| panic!("prepare: {e}\n{out}"));
    let _cleanup2 = Images(vec![img.tag.clone()]);
    assert!(img.deps_skipped.is_empty(), "{:?}", img.deps_skipped);
    assert!(
        !img.deps_reused || !out.contains("building dependencies image"),
        "{out}"
    );
    assert!(
        img.deps_reused
            || out.contains("leaving out patchloop-fixture-no-such-dist>=1.0 (dependencies.skip)"),
        "{out}"
    );
}

/// ciso8601 2.1.3 publishes only an sdist whose C extension has no pure-Python fallback, so it
/// imports only if prepare compiled it; the compiler that did must not be in the sandbox image.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_c_extension_is_compiled_on_the_builder_and_no_compiler_reaches_the_sandbox() {
    let (_dir, root) = checkout("c-ext", "deps-c-ext");
    let (r, out) = prepare_at(&root).await;
    let img = r.unwrap_or_else(|e| panic!("prepare: {e}\n{out}"));
    let _cleanup = Images(vec![img.tag.clone()]);
    assert!(img.deps_skipped.is_empty(), "{:?}\n{out}", img.deps_skipped);
    let note = label(&img.tag, "patchloop.env_note");
    assert!(
        note.contains("compiled from source (no wheel for this Python): ciso8601 2.1.3"),
        "{note}\n{out}"
    );
    // The wheel was built on the builder, which has the toolchain.
    let builder = label(&label(&img.tag, LABEL_DEPS), LABEL_DEPS_BUILDER);
    assert!(
        builder.starts_with(&format!("{BUILDER_REPO}:")),
        "{builder:?}\n{out}"
    );
    let o = run_in(&builder, "command -v gcc && command -v cc");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // In an episode container: the compiled module imports and the suite passes, while no C
    // compiler is on PATH or installed.
    let docker = connect()
        .await
        .expect("Docker must be running for these tests");
    let policy = ContainerPolicy {
        read_only_paths: img.tests_dirs.clone(),
        lifetime_secs: 300,
        ..Default::default()
    };
    let run = format!("deps-c-ext-{:08x}", rand::random::<u32>());
    let c = Container::start(&docker, &img.tag, &policy, &run, "episode")
        .await
        .unwrap_or_else(|e| panic!("starting an episode container of {}: {e}", img.tag));
    let script = "python -c 'import ciso8601; print(ciso8601.__file__)'; \
        python -m pytest -q -p no:cacheprovider tests; \
        for t in gcc cc c99 x86_64-linux-gnu-gcc-12; do command -v $t && echo found=$t; done; \
        dpkg-query -W -f='${Status} ${Package}\\n' gcc gcc-12 cpp 2>/dev/null | grep '^install ok installed' && echo found=dpkg; \
        echo end";
    let ran = c
        .exec(ExecRequest::argv(["sh", "-c", script]).timeout(std::time::Duration::from_secs(120)))
        .await;
    let _ = c.remove().await;
    let ran = ran.unwrap_or_else(|e| panic!("exec: {e}"));
    let text = ran.output.render();
    assert!(text.contains("site-packages/ciso8601.cpython-"), "{text}");
    assert!(text.contains("2 passed"), "{text}");
    assert!(
        !text.contains("found="),
        "a compiler is in the sandbox:\n{text}"
    );
    assert!(text.contains("end"), "{text}");
}

/// The no-toolchain fallback, forced honestly: a base whose `apt-get` (a wrapper first on PATH)
/// always fails, as when no Debian mirror answers. The builder image cannot be built, so the
/// base itself builds the wheels, prepare succeeds and says so, and the dependencies image
/// records no builder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_toolchain_the_base_builds_the_wheels_and_prepare_says_so() {
    let base = std::env::var("PATCHLOOP_TEST_BASE")
        .unwrap_or_else(|_| patchloop::sandbox::image::base_tag());
    let broken = format!("patchloop-test-noapt:{:08x}", rand::random::<u32>());
    let dockerfile = format!(
        "FROM {base}\nRUN printf '#!/bin/sh\\necho \"apt-get: refused (no mirror answers)\" >&2\\nexit 100\\n' > /usr/local/sbin/apt-get && chmod 755 /usr/local/sbin/apt-get\n"
    );
    let mut child = Command::new("docker")
        .args(["build", "-q", "-t", &broken, "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(dockerfile.as_bytes())
            .unwrap();
    }
    let built = child.wait_with_output().unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let (_dir, root) = checkout("minilib", "deps-no-toolchain");
    // Dropped last: the sandbox image first, then its dependencies image, then the base.
    let mut cleanup = Images(Vec::new());
    let (r, out) = prepare_on(&root, Some(broken.clone())).await;
    let img = r.unwrap_or_else(|e| panic!("prepare: {e}\n{out}"));
    let deps = label(&img.tag, LABEL_DEPS);
    cleanup.0 = vec![img.tag.clone(), deps.clone(), broken.clone()];
    assert!(out.contains(NO_TOOLCHAIN_NOTE), "{out}");
    assert!(out.contains("apt-get"), "{out}");
    assert_eq!(label(&deps, LABEL_DEPS_BUILDER), "none", "{out}");
    let no_builder = Command::new("docker")
        .args(["image", "inspect", &builder::builder_tag(&broken)])
        .output()
        .unwrap();
    assert!(
        !no_builder.status.success(),
        "a builder image was made\n{out}"
    );
    // The image works: its tests are collected and pass.
    let o = run_in(
        &img.tag,
        "cd /workspace && python -m pytest -q -p no:cacheprovider",
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && text.contains("passed"), "{text}");
}

/// Issue #41: a project whose `pyproject.toml` uses a PEP 639 license string (`license =
/// "MIT"`) and requires only `setuptools>=61` builds in CI's isolated environment with the
/// newest setuptools; the image's venv has an older one (66) that fails
/// `metadata-generation-failed`. The install layer builds with the backend its
/// `[build-system] requires` allows, so the editable install works and no fallback is noted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_build_backend_is_the_one_build_system_requires_as_in_ci() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("prepare-deps-spdx");
    write(
        &root,
        "pyproject.toml",
        "[build-system]\nrequires = [\"setuptools>=61\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"spdxpkg\"\nversion = \"1.2.3\"\nlicense = \"MIT\"\n\n[tool.setuptools]\npackages = [\"spdxpkg\"]\n",
    );
    write(&root, "spdxpkg/__init__.py", "def one():\n    return 1\n");
    write(
        &root,
        "tests/test_one.py",
        "from spdxpkg import one\n\n\ndef test_one():\n    assert one() == 1\n",
    );
    let (img, out) = prepare_at(&root).await;
    let img = img.unwrap_or_else(|e| panic!("{e}\n{out}"));
    let _images = Images(vec![img.tag.clone()]);
    // (The install layer's log says which backend built it when it is built, not when a
    // rerun reuses it: the image itself is checked.)
    assert!(!out.contains("install fallback"), "{out}");
    let note = label(&img.tag, "patchloop.env_note");
    assert!(!note.contains("editable install failed"), "{note}");
    // Installed, not merely on the path: its metadata is there.
    let o = run_in(
        &img.tag,
        "cd /tmp && /opt/venv/bin/python -c 'import importlib.metadata as m; print(m.version(\"spdxpkg\"))'",
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "1.2.3",
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// CI installs the test requirements into a fresh environment: `pytest>=7` gets the newest
/// pytest, not the older copy the offline base has from Debian (7.2.1), which does not know
/// the options newer projects configure (`consider_namespace_packages`, pytest 8.1). The same
/// for a requirement's own dependencies: `jaraco.functools` asks for `more_itertools` with no
/// version, and the base's Debian copy (8.10) must not stand in for the newest (hepunits: pint
/// with Debian's typing_extensions 4.4). Needs PyPI.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_requirement_the_base_already_satisfies_gets_the_version_ci_would() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("prepare-deps-fresh-pytest");
    write(
        &root,
        "requirements-test.txt",
        "pytest>=7\njaraco.functools\n",
    );
    write(
        &root,
        "pytest.ini",
        "[pytest]\nconsider_namespace_packages = true\naddopts = -W error::pytest.PytestConfigWarning\n",
    );
    write(&root, "nspkg/sub/__init__.py", "def one():\n    return 1\n");
    write(
        &root,
        "tests/test_one.py",
        "from nspkg.sub import one\n\n\ndef test_one():\n    assert one() == 1\n",
    );
    let (img, out) = prepare_at(&root).await;
    let img = img.unwrap_or_else(|e| panic!("{e}\n{out}"));
    let _images = Images(vec![img.tag.clone()]);
    let o = run_in(
        &img.tag,
        "cd /workspace && /opt/venv/bin/python -m pytest -q -p no:cacheprovider 2>&1; echo rc=$?",
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("1 passed") && text.contains("rc=0"), "{text}");
    let o = run_in(
        &img.tag,
        "/opt/venv/bin/python -c 'import pytest; print(pytest.__version__)'",
    );
    let v = String::from_utf8_lossy(&o.stdout);
    let major: u32 = v.split('.').next().unwrap().trim().parse().unwrap();
    assert!(major >= 8, "pytest {v}");
    let o = run_in(
        &img.tag,
        "/opt/venv/bin/python -c 'import more_itertools as m; print(m.__version__, m.__file__)'",
    );
    let v = String::from_utf8_lossy(&o.stdout);
    let major: u32 = v.split('.').next().unwrap().trim().parse().unwrap();
    assert!(
        major >= 10 && v.contains("/opt/venv/"),
        "more_itertools {v}"
    );
}

/// A version module the build writes (`[tool.setuptools_scm] write_to`) that the sdist ships
/// and the project's `.gitignore` names (isodate 0.7.2): the ignored copy is dropped with the
/// checkout's artefacts, so the one the build wrote must reach the workspace, as in CI where
/// the build writes it. Needs PyPI (setuptools_scm).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_file_the_build_writes_again_reaches_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("prepare-deps-scm-version");
    write(
        &root,
        "pyproject.toml",
        "[build-system]\nrequires = [\"setuptools>=64\", \"setuptools_scm[toml]>=8\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"scmpkg\"\ndynamic = [\"version\"]\n\n[tool.setuptools_scm]\nwrite_to = \"src/scmpkg/version.py\"\nfallback_version = \"0.0.0.dev0\"\n",
    );
    write(
        &root,
        "PKG-INFO",
        "Metadata-Version: 2.1\nName: scmpkg\nVersion: 1.4.2\n",
    );
    write(&root, ".gitignore", "src/scmpkg/version.py\n");
    write(
        &root,
        "src/scmpkg/__init__.py",
        "from scmpkg.version import version as __version__\n",
    );
    write(&root, "src/scmpkg/version.py", "version = '1.4.2'\n");
    write(
        &root,
        "tests/test_version.py",
        "import scmpkg\n\n\ndef test_version():\n    assert scmpkg.__version__.startswith('1.4')\n",
    );
    let (img, out) = prepare_at(&root).await;
    let img = img.unwrap_or_else(|e| panic!("{e}\n{out}"));
    let _images = Images(vec![img.tag.clone()]);
    let o = run_in(
        &img.tag,
        "cd /workspace && /opt/venv/bin/python -m pytest -q -p no:cacheprovider tests 2>&1; echo rc=$?",
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("1 passed") && text.contains("rc=0"),
        "{text}\n{out}"
    );
}

/// A test dependency that depends on the project itself (Twisted on Automat, pytest on pluggy)
/// brings the project's registry release into the venv, first on sys.path: the checkout must
/// be what the tests import, as after CI's install of the project. Needs PyPI (`build`, which
/// requires `pyproject_hooks`, the fixture's name).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_registry_copy_a_dependency_brings_does_not_shadow_the_checkout() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("prepare-deps-own-release");
    write(
        &root,
        "pyproject.toml",
        "[build-system]\nrequires = [\"setuptools>=64\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"pyproject_hooks\"\nversion = \"0.0.1\"\ndependencies = [\"build>=1\"]\n\n[tool.setuptools]\npy-modules = [\"pyproject_hooks\"]\n",
    );
    write(&root, "pyproject_hooks.py", "MARK = 'checkout'\n");
    write(
        &root,
        "tests/test_mark.py",
        "import pyproject_hooks\n\n\ndef test_the_checkout_is_imported():\n    assert getattr(pyproject_hooks, 'MARK', pyproject_hooks.__file__) == 'checkout'\n",
    );
    let (img, out) = prepare_at(&root).await;
    let img = img.unwrap_or_else(|e| panic!("{e}\n{out}"));
    let _images = Images(vec![img.tag.clone()]);
    assert!(
        out.contains("removed pyproject_hooks"),
        "prepare does not say it removed the registry copy:\n{out}"
    );
    // Run from `/`: no checkout directory is put first on sys.path, only the install decides.
    let o = run_in(
        &img.tag,
        "cd / && /opt/venv/bin/python -m pytest -q -p no:cacheprovider /workspace/tests 2>&1; echo rc=$?",
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("1 passed") && text.contains("rc=0"),
        "{text}\n{out}"
    );
}

/// A uv-managed project (dirty-equals' shape): CI runs `make test`, whose recipe is `uv run
/// pytest`; the tests import a package only uv's default `dev` group names, here in uv's older
/// spelling (`[tool.uv] dev-dependencies`), which deps.py reads as that group. Before, nothing
/// named a test dependency, and the tests could not be collected. Needs PyPI (tomli-w).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uvs_default_dev_group_is_installed_as_uv_run_would() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("prepare-deps-uv-dev");
    write(
        &root,
        "pyproject.toml",
        "[build-system]\nrequires = ['setuptools']\nbuild-backend = 'setuptools.build_meta'\n\n[project]\nname = 'uvdev'\nversion = '0.1'\n\n[tool.uv]\ndev-dependencies = ['pytest>=8', 'tomli-w']\n",
    );
    write(&root, "Makefile", "test:\n\tTZ=utc uv run pytest -q\n");
    // The lock pins tomli-w below its newest; the project itself and a package pinned twice
    // (per Python) are not constraints.
    write(
        &root,
        "uv.lock",
        "version = 1\nrequires-python = \">=3.9\"\n\n[[package]]\nname = \"uvdev\"\nversion = \"0.1\"\nsource = { editable = \".\" }\n\n[[package]]\nname = \"tomli-w\"\nversion = \"1.0.0\"\nsource = { registry = \"https://pypi.org/simple\" }\n\n[[package]]\nname = \"pytest\"\nversion = \"8.3.5\"\nsource = { registry = \"https://pypi.org/simple\" }\nresolution-markers = [\"python_full_version >= '3.10'\"]\n\n[[package]]\nname = \"pytest\"\nversion = \"8.0.0\"\nsource = { registry = \"https://pypi.org/simple\" }\nresolution-markers = [\"python_full_version < '3.10'\"]\n",
    );
    write(
        &root,
        ".github/workflows/ci.yml",
        "jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: astral-sh/setup-uv@v6\n      - run: make test\n",
    );
    write_tomli_w_package(&root, "uvdev", "uvdev");
    let (img, out) = prepare_at(&root).await;
    let img = img.unwrap_or_else(|e| panic!("{e}\n{out}"));
    let _images = Images(vec![img.tag.clone()]);
    assert!(
        img.deps_source
            .as_deref()
            .is_some_and(|s| s.starts_with("uv's project environment: groups and extras dev")),
        "{:?}\n{out}",
        img.deps_source
    );
    assert_tests_pass_with_the_locked_tomli_w(&img.tag, &out);
    let pytest = installed_version(&img.tag, "pytest");
    assert_ne!(pytest, "8.0.0", "a package pinned twice is left free");
    // The locked version is the evidence: deps.py's own message is printed only when the
    // dependencies layer is built, not when an earlier run's is reused.
}

/// A test command given with no workflow to read (`--test-cmd`, the config's
/// `test_command`, a bench task): `uv run --with '.[dev]' pytest` installs the project's `dev`
/// extra, which only the command names (url-normalize 3.0: its pytest options need
/// pytest-socket from that extra). Before, the command's own environment was not read, and
/// collection failed. Needs PyPI (tomli-w).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_given_commands_own_environment_is_installed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("prepare-deps-given-uv");
    write(
        &root,
        "pyproject.toml",
        "[build-system]\nrequires = ['setuptools']\nbuild-backend = 'setuptools.build_meta'\n\n[project]\nname = 'givenuv'\nversion = '0.1'\n\n[project.optional-dependencies]\ndev = ['pytest>=8', 'tomli-w']\n",
    );
    write_tomli_w_package(&root, "givenuv", "givenuv");
    let (img, out) = prepare_with(&root, None, Some("uv run --with '.[dev]' pytest -q")).await;
    let img = img.unwrap_or_else(|e| panic!("{e}\n{out}"));
    let _images = Images(vec![img.tag.clone()]);
    assert!(
        out.contains("what the given test command installs"),
        "{out}"
    );
    assert_the_one_test_passes(&img.tag, &out);
}

/// An extra that names the project's own other extras (uncertainties 3.2.3: `all =
/// ["uncertainties[doc,test,arrays]"]`, and CI runs `pip install .[all]`): the requirement
/// names the project, which the source layer installs, so it was dropped whole and the test
/// extra's packages (pytest-cov there) were never installed. Now the named extras are
/// expanded. Needs PyPI (tomli-w).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extra_naming_the_projects_own_extras_installs_what_they_require() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("prepare-deps-own-extras");
    write(
        &root,
        "pyproject.toml",
        "[build-system]\nrequires = ['setuptools>=61']\nbuild-backend = 'setuptools.build_meta'\n\n[project]\nname = 'own-extras'\nversion = '0.1'\n\n[project.optional-dependencies]\ntest = ['pytest', 'tomli-w']\ndoc = []\nall = ['own_extras[doc, test]']\n\n[tool.setuptools]\npackages = ['ownextras']\n",
    );
    write(
        &root,
        ".github/workflows/ci.yml",
        "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: python -m pip install .[all]\n      - run: python -m pytest tests\n",
    );
    write_tomli_w_package(&root, "ownextras", "ownextras");
    let (img, out) = prepare_at(&root).await;
    let img = img.unwrap_or_else(|e| panic!("{e}\n{out}"));
    let _images = Images(vec![img.tag.clone()]);
    assert_the_one_test_passes(&img.tag, &out);
}

/// `setup.py` whose `extras_require` reads its test requirements from a file
/// (pathvalidate 3.3: `with open(os.path.join(REQUIREMENT_DIR, "test_requirements.txt")) as
/// f: TESTS_REQUIRES = [...]`, named by its tox env's `extras`): the file goes into the
/// dependencies layer and deps.py reads it. Before, the extra was "not a literal" and nothing
/// of it was installed. Needs PyPI (tomli-w).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_setup_py_extra_read_from_a_requirements_file_is_installed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("prepare-deps-setup-file");
    write(
        &root,
        "setup.py",
        "import os.path\nfrom typing import Final\n\nimport setuptools\n\nREQUIREMENT_DIR: Final = 'requirements'\n\nwith open('README.md') as f:\n    long_description = f.read()\n\nwith open(os.path.join(REQUIREMENT_DIR, 'test_requirements.txt')) as f:\n    TESTS_REQUIRES = [line.strip() for line in f if line.strip()]\n\nsetuptools.setup(\n    name='setupfile',\n    version='0.1',\n    packages=['setupfile'],\n    extras_require={'test': TESTS_REQUIRES},\n)\n",
    );
    write(&root, "README.md", "setupfile\n");
    // The tox env names the extra (pathvalidate's `extras = test`): what CI installs wins over
    // the fallbacks, which would find a `requirements/test*.txt` on their own.
    write(
        &root,
        "tox.ini",
        "[tox]\nenvlist = py311\n\n[testenv]\nextras =\n    test\ncommands =\n    pytest {posargs}\n",
    );
    write(
        &root,
        "requirements/test_requirements.txt",
        "pytest>=8\n# the one the tests import\ntomli-w\n",
    );
    write_tomli_w_package(&root, "setupfile", "setupfile");
    let (img, out) = prepare_at(&root).await;
    let img = img.unwrap_or_else(|e| panic!("{e}\n{out}"));
    let _images = Images(vec![img.tag.clone()]);
    assert_the_one_test_passes(&img.tag, &out);
}

/// A poetry project: CI runs `poetry install` then `poetry run pytest`; the tests import a
/// package only a poetry group names (poetry's own constraint syntax, `^1.0`), and poetry.lock
/// pins it below its newest. deps.py converts the group to PEP 508 and follows the lock (a
/// PyPI package has no `source` there). Needs PyPI (poetry-core, tomli-w).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_poetry_group_is_installed_at_the_locked_version() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("prepare-deps-poetry");
    write(
        &root,
        "pyproject.toml",
        "[build-system]\nrequires = ['poetry-core>=1.0']\nbuild-backend = 'poetry.core.masonry.api'\n\n[tool.poetry]\nname = 'podev'\nversion = '0.1.0'\ndescription = ''\nauthors = ['x <x@example.com>']\n\n[tool.poetry.dependencies]\npython = '^3.8'\n\n[tool.poetry.group.test.dependencies]\npytest = '>=8'\ntomli-w = '^1.0'\n\n[tool.poetry.group.docs]\noptional = true\n\n[tool.poetry.group.docs.dependencies]\npatchloop-fixture-no-such-dist = '*'\n",
    );
    write(
        &root,
        "poetry.lock",
        "[[package]]\nname = \"tomli-w\"\nversion = \"1.0.0\"\ndescription = \"\"\noptional = false\npython-versions = \">=3.7\"\nfiles = []\n\n[metadata]\nlock-version = \"2.0\"\npython-versions = \"^3.8\"\ncontent-hash = \"0\"\n",
    );
    write(
        &root,
        ".github/workflows/ci.yml",
        "jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: pipx install poetry\n      - run: poetry install\n      - run: poetry run pytest -q\n",
    );
    write_tomli_w_package(&root, "podev", "podev");
    let (img, out) = prepare_at(&root).await;
    let img = img.unwrap_or_else(|e| panic!("{e}\n{out}"));
    let _images = Images(vec![img.tag.clone()]);
    assert!(
        img.deps_source
            .as_deref()
            .is_some_and(|s| s.starts_with("poetry's environment: groups and extras test")),
        "{:?}\n{out}",
        img.deps_source
    );
    // The optional group's requirement was never tried.
    assert!(!out.contains("patchloop-fixture-no-such-dist"), "{out}");
    assert_tests_pass_with_the_locked_tomli_w(&img.tag, &out);
}

/// A pdm project (marko's shape): CI runs `pdm install` then `pdm run pytest`; the tests import
/// a package only a `[tool.pdm.dev-dependencies]` group names, and pdm.lock pins it below its
/// newest. Needs PyPI (pdm-backend, tomli-w).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pdm_dev_group_is_installed_at_the_locked_version() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("prepare-deps-pdm");
    write(
        &root,
        "pyproject.toml",
        "[build-system]\nrequires = ['pdm-backend']\nbuild-backend = 'pdm.backend'\n\n[project]\nname = 'pddev'\nversion = '0.1.0'\nrequires-python = '>=3.8'\ndependencies = []\n\n[tool.pdm.dev-dependencies]\ntest = ['pytest>=8', 'tomli-w>=1']\n",
    );
    write(
        &root,
        "pdm.lock",
        "[metadata]\ngroups = [\"default\", \"test\"]\nlock_version = \"4.4\"\n\n[[package]]\nname = \"tomli-w\"\nversion = \"1.0.0\"\nrequires_python = \">=3.7\"\nsummary = \"\"\ngroups = [\"test\"]\nfiles = []\n",
    );
    write(
        &root,
        ".github/workflows/ci.yml",
        "jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: pdm install\n      - run: pdm run pytest -q\n",
    );
    write_tomli_w_package(&root, "src/pddev", "pddev");
    let (img, out) = prepare_at(&root).await;
    let img = img.unwrap_or_else(|e| panic!("{e}\n{out}"));
    let _images = Images(vec![img.tag.clone()]);
    assert!(
        img.deps_source
            .as_deref()
            .is_some_and(|s| s.starts_with("pdm's environment: groups and extras test")),
        "{:?}\n{out}",
        img.deps_source
    );
    assert_tests_pass_with_the_locked_tomli_w(&img.tag, &out);
}

/// An old checkout with no lock: its PKG-INFO names a release uploaded on 2023-05-30
/// (docopt-ng 0.9.0, whose conftest this is), its test extra asks for `pytest` unpinned, and its
/// conftest implements `pytest_collect_file` with the `path` argument pytest 9 removed. pytest
/// resolved today refuses the conftest and collects nothing; prepare resolves the test
/// dependencies again as of the release (pip's `--uploaded-prior-to`), the test collects and
/// passes, the note says so, and a second prepare of the same dependency files reuses the
/// dated resolution without collecting again. Needs PyPI (pip ≥ 26, pytest).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_old_checkout_whose_tests_todays_pytest_cannot_collect_is_resolved_as_of_its_release() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("prepare-deps-as-of");
    write(
        &root,
        "PKG-INFO",
        "Metadata-Version: 2.1\nName: docopt-ng\nVersion: 0.9.0\n\nAn sdist of 2023.\n",
    );
    // The dated resolution is adopted under the undated layer's tag, and only a layer built
    // now is checked: a dependency file of its own each run, so every run builds it.
    let run = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    write(
        &root,
        "pyproject.toml",
        &format!(
            "# run {run}\n[build-system]\nrequires = ['setuptools>=61']\nbuild-backend = 'setuptools.build_meta'\n\n[project]\nname = 'asof'\nversion = '0.9.0'\n\n[project.optional-dependencies]\ntest = ['pytest']\n\n[tool.setuptools]\npackages = ['asof']\n"
        ),
    );
    write(&root, "asof/__init__.py", "def two():\n    return 2\n");
    write(
        &root,
        "tests/conftest.py",
        "def pytest_collect_file(file_path, path, parent):\n    return None\n",
    );
    write(
        &root,
        "tests/test_two.py",
        "from asof import two\n\n\ndef test_two():\n    assert two() == 2\n",
    );
    let (img, out) = prepare_at(&root).await;
    let img = img.unwrap_or_else(|e| panic!("{e}\n{out}"));
    let mut images = Images(vec![img.tag.clone()]);
    assert!(
        out.contains("cannot be collected with the dependencies resolved today")
            && out.contains("PluginValidationError"),
        "{out}"
    );
    assert!(out.contains("resolved as of 2023-05-30"), "{out}");
    let pytest = installed_version(&img.tag, "pytest");
    assert!(
        pytest.starts_with("7."),
        "pytest {pytest} as of 2023-05-30\n{out}"
    );
    assert_the_one_test_passes(&img.tag, &out);
    // Adopted: the next prepare reuses the dated dependencies and collects nothing again.
    write(&root, "asof/__init__.py", "def two():\n    return 1 + 1\n");
    let (again, out2) = prepare_at(&root).await;
    let again = again.unwrap_or_else(|e| panic!("{e}\n{out2}"));
    images.0.push(again.tag.clone());
    assert!(
        out2.contains("exists; reusing it") && !out2.contains("resolved today"),
        "{out2}"
    );
    assert!(
        installed_version(&again.tag, "pytest").starts_with("7."),
        "{out2}"
    );
    assert_the_one_test_passes(&again.tag, &out2);
}
