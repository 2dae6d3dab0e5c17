use super::*;

#[test]
fn strategy_and_escalation_inputs_reach_the_config_and_bad_ones_name_the_input() {
    let env = |k: &str| match k {
        "INPUT_STRATEGIES" => Some("loop".to_string()),
        "INPUT_ESCALATE" => Some("qwen2.5-coder:7b,\n qwen2.5-coder:14b".to_string()),
        _ => None,
    };
    let mut c = Config::default();
    assert_eq!(c.repair.strategies, repair::DEFAULT_STRATEGIES);
    for (n, f) in inputs_from_env(env).unwrap() {
        c.apply(&f, Source::Input(n));
    }
    assert_eq!(c.repair.strategies, [repair::Strategy::Loop]);
    assert_eq!(c.repair.escalate, ["qwen2.5-coder:7b", "qwen2.5-coder:14b"]);
    assert_eq!(
        c.sources["repair.escalate"],
        Source::Input("escalate".into())
    );
    let bad = |k: &str| (k == "INPUT_STRATEGIES").then(|| "agentless".to_string());
    let e = inputs_from_env(bad).unwrap_err();
    assert_eq!(e.key, "strategies");
    assert!(e.message.contains("sampled and/or loop"), "{}", e.message);
    // The file spelling.
    let f = parse_file(
        "p.yml",
        "repair:\n  strategies: [candidates]\n  candidates: 8\n  edit_format: search_replace\n",
    )
    .unwrap();
    let mut c = Config::default();
    c.apply(&f, Source::Repo("p.yml".into()));
    assert_eq!(c.repair.candidates, 8);
    assert_eq!(c.repair.edit_format, repair::EditFormat::SearchReplace);
    let unknown = parse_file("p.yml", "repair:\n  stratgies: [loop]\n").unwrap_err();
    assert!(unknown.message.contains("stratgies"), "{}", unknown.message);
}

#[test]
fn precedence_and_sources() {
    let org = parse_file(
        "org/.github/patchloop.yml",
        "model: a\nreruns: 5\nbudgets:\n  max_steps: 10\n",
    )
    .unwrap();
    let repo = parse_file(
        ".github/patchloop.yml",
        "model: b\nbudgets:\n  max_cost_usd: 0.5\n",
    )
    .unwrap();
    let inputs = inputs_from_env(|k| (k == "INPUT_MODEL").then(|| "c".to_string())).unwrap();
    let c = Config::merge(
        Some(("org/.github/patchloop.yml", &org)),
        Some((".github/patchloop.yml", &repo)),
        &inputs,
    );
    assert_eq!(c.model.as_deref(), Some("c"));
    assert_eq!(c.reruns, 5);
    assert_eq!(c.budgets.max_steps, 10);
    assert_eq!(c.budgets.max_cost_usd, 0.5);
    assert_eq!(c.budgets.max_tokens, Budgets::default().max_tokens);
    assert_eq!(c.sources["model"], Source::Input("model".into()));
    assert_eq!(
        c.sources["reruns"],
        Source::Org("org/.github/patchloop.yml".into())
    );
    assert_eq!(
        c.sources["budgets.max_cost_usd"],
        Source::Repo(".github/patchloop.yml".into())
    );
    assert_eq!(c.sources["budgets.max_tokens"], Source::Default);
    let show = c.render_show();
    assert!(show.contains("model"), "{show}");
    assert!(
        show.lines().any(|l| l.starts_with("reruns")
            && l.contains("= 5")
            && l.ends_with("# org (org/.github/patchloop.yml)")),
        "{show}"
    );
}

#[test]
fn the_verify_section_turns_the_costlier_layers_on_and_off() {
    let c = Config::default();
    assert!(c.verify.probe && c.verify.review_model.is_none());
    assert!(c.render_show().contains("verify.review_model"));
    let repo = parse_file(
        ".github/patchloop.yml",
        "verify:\n  probe: false\n  review_model: ollama:qwen2.5-coder:7b\n",
    )
    .unwrap();
    let c = Config::merge(None, Some((".github/patchloop.yml", &repo)), &[]);
    assert!(!c.verify.probe);
    assert_eq!(
        c.verify.review_model.as_deref(),
        Some("ollama:qwen2.5-coder:7b")
    );
    assert_eq!(
        c.sources["verify.review_model"],
        Source::Repo(".github/patchloop.yml".into())
    );
    let e = parse_file(".github/patchloop.yml", "verify:\n  reviewer: x\n").unwrap_err();
    assert_eq!(e.key, "verify.reviewer");
}

#[test]
fn unknown_keys_name_key_file_line_and_valid_keys() {
    let e = parse_file(".github/patchloop.yml", "model: x\nmodle: y\n").unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("modle", Some(2)));
    let s = e.to_string();
    assert!(
        s.starts_with(".github/patchloop.yml line 2: `modle`"),
        "{s}"
    );
    assert!(
        s.contains("test_command") && s.contains("budgets"),
        "lists valid keys: {s}"
    );

    let e = parse_file("f.yml", "budgets:\n  max_steps: 3\n  maxcost: 1\n").unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("budgets.maxcost", Some(3)));
    assert!(e.message.contains("max_cost_usd"), "{e}");

    let e = parse_file("f.yml", "mode: yolo\n").unwrap_err();
    assert_eq!(e.key, "mode");
    assert!(e.message.contains("suggest"), "{e}");
}

#[test]
fn inputs_validate() {
    let e = inputs_from_env(|k| (k == "INPUT_MAX-STEPS").then(|| "many".into())).unwrap_err();
    assert_eq!(e.key, "max-steps");
    let ok = inputs_from_env(|k| (k == "INPUT_MAX_COST").then(|| "$2.5".into())).unwrap();
    assert_eq!(ok[0].1.budgets.as_ref().unwrap().max_cost_usd, Some(2.5));
    assert!(inputs_from_env(|_| Some("  ".into())).unwrap().is_empty());
}

#[test]
fn permissions() {
    assert!(MinPermission::Write.allows("write"));
    assert!(MinPermission::Write.allows("admin"));
    assert!(!MinPermission::Write.allows("triage"));
    assert!(!MinPermission::Write.allows("read"));
    assert!(!MinPermission::Maintain.allows("write"));
    assert!(MinPermission::Maintain.allows("maintain"));
    assert!(!MinPermission::Admin.allows("maintain"));
}

#[test]
fn schema_is_closed_and_has_no_docker_fields() {
    let s = schema_json();
    let v: serde_json::Value = serde_json::from_str(&s).unwrap();
    assert_eq!(v["additionalProperties"], false);
    for forbidden in ["mount", "volume", "image", "bind", "privileged"] {
        assert!(
            !s.to_lowercase().contains(&format!("\"{forbidden}")),
            "{forbidden}"
        );
    }
    assert!(v["properties"]["budgets"].is_object());
}
