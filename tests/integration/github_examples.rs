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
    assert_eq!(a["runs"]["image"], "Dockerfile");
    assert!(root().join("Dockerfile").exists());
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
