//! One test run in the verification container (hardened pytest, or the JUnit harness for
//! Rust and Node) and the record it leaves.

use std::collections::BTreeMap;

use super::checks::{
    Collected, GuardReport, parse_marker, parse_stream, stream_vs_junit, tree_changes,
};
use super::{VerifyRequest, junit_snapshot_input};
use crate::sandbox::lang::ProjectKind;
use crate::sandbox::output::tail_chars;
use crate::sandbox::{ExecRequest, ExecStatus, Sandbox, WORKSPACE};
use crate::verify::exec::tool;
use crate::verify::verdict::{GuardStatus, Phase, RunRecord, RunScope};
use crate::verify::{harness, junit, junit_run, receipt};

/// Output kept per test run: room for the outcome stream of large suites (~100 bytes a test).
const RUN_OUTPUT_CAP: usize = 16 << 20;

#[allow(clippy::too_many_arguments)]
pub(super) async fn one_run(
    c: &dyn Sandbox,
    plan: &harness::RunPlan,
    scope: RunScope,
    phase: Phase,
    index: usize,
    targets: &[String],
    expected_tree: &BTreeMap<String, String>,
    req: &VerifyRequest,
) -> Result<RunRecord, String> {
    let out_dir = format!(
        "/tmp/pl-{}-{index}-{:08x}",
        match phase {
            Phase::Before => "before",
            Phase::After => "after",
        },
        rand::random::<u32>()
    );
    let nonce = format!("{:016x}", rand::random::<u64>());
    let stdin = plan.stdin_json(&out_dir, &nonce);
    let res = c
        .exec(
            ExecRequest::argv(plan.argv())
                .stdin(stdin)
                .timeout(req.run_timeout)
                // The outcome stream (one record per test report) travels in this output.
                .output_cap(RUN_OUTPUT_CAP),
        )
        .await
        .map_err(|e| format!("sandbox failure during a test run: {e}"))?;
    let collected: Collected = tool(
        c,
        "collect",
        &serde_json::json!({
            "out_dir": out_dir,
            "workspace": WORKSPACE,
            "tests_dirs": req.image.tests_dirs,
        }),
    )
    .await?;
    let after_tree = &collected.snapshot;

    let text = res.output.render();
    let mut external = tree_changes(expected_tree, after_tree);
    let stream = parse_stream(&text, &nonce);
    external.extend(stream.problems.iter().cloned());
    if res.output.is_truncated() {
        // Records were dropped with the middle of the output: the stream cannot vouch for
        // the JUnit report (a flood of output is how code under test would try to hide them).
        external.push(format!(
            "the run printed more than {} MiB, so the outcome stream is incomplete",
            RUN_OUTPUT_CAP >> 20
        ));
    }
    let mut marker_missing = false;
    let mut pytest = None;
    match parse_marker(&text) {
        Err(e) => external.push(e),
        Ok(None) => marker_missing = true,
        Ok(Some(m)) => {
            pytest = m.pytest_note();
            if m.junit != collected.junit_sha256 || m.guard != collected.guard_sha256 {
                external
                    .push("the JUnit or guard report changed after pytest returned".to_string());
            }
            if res.status != ExecStatus::Exited(m.rc) {
                external.push(format!(
                    "pytest returned {} but the process exited with {:?}",
                    m.rc, res.status
                ));
            }
        }
    }
    let guard_report = collected
        .guard
        .as_deref()
        .and_then(|g| serde_json::from_str::<GuardReport>(g).ok());
    let guard = match &guard_report {
        _ if marker_missing => GuardStatus::Missing,
        None => GuardStatus::Missing,
        Some(g) if g.status == "clean" => GuardStatus::Clean,
        Some(g) => GuardStatus::Tampered {
            findings: if g.findings.is_empty() {
                vec![format!("guard status `{}`", g.status)]
            } else {
                g.findings.clone()
            },
        },
    };
    if let Some(g) = &guard_report {
        for (path, hash) in &g.conftests {
            let rel = path.strip_prefix(&format!("{WORKSPACE}/")).unwrap_or(path);
            if expected_tree.get(rel) != Some(hash) {
                external.push(format!(
                    "a conftest.py not in the verified tree was loaded: {rel}"
                ));
            }
        }
    }
    let (results, junit_problem) = match &collected.junit {
        None => (None, Some("no JUnit report was written".to_string())),
        Some(xml) => match junit::parse(xml) {
            Err(e) => (None, Some(e.to_string())),
            Ok(run) => {
                let mut ids: Vec<&String> = targets.iter().collect();
                ids.extend(stream.outcomes.keys());
                if let Some(g) = &guard_report {
                    ids.extend(g.outcomes.keys());
                }
                let known = receipt::known_ids(ids);
                let named = run.node_ids(&known);
                external.extend(stream_vs_junit(&stream, &named));
                if let Some(g) = &guard_report {
                    for (id, case) in &named {
                        if case.outcome == junit::TestOutcome::Passed
                            && g.outcomes.contains_key(id)
                            && g.outcomes.get(id).map(String::as_str) != Some("passed")
                        {
                            external.push(format!(
                                "the JUnit report says {id} passed but pytest reported `{}`",
                                g.outcomes.get(id).map(String::as_str).unwrap_or("nothing")
                            ));
                        }
                    }
                }
                (Some(named), None)
            }
        },
    };
    Ok(RunRecord {
        phase,
        index,
        scope,
        exit: res.status,
        duration: res.duration,
        results,
        junit_problem,
        guard,
        external_findings: external,
        pytest,
        output_tail: tail_chars(&text, 3000).to_string(),
    })
}

pub(super) async fn one_run_junit(
    c: &dyn Sandbox,
    kind: ProjectKind,
    phase: Phase,
    index: usize,
    expected_tree: &BTreeMap<String, String>,
    req: &VerifyRequest,
) -> Result<(RunRecord, Option<String>), String> {
    let out_dir = format!(
        "/tmp/pl-junit-{}-{index}-{:08x}",
        match phase {
            Phase::Before => "before",
            Phase::After => "after",
        },
        rand::random::<u32>()
    );
    let res = c
        .exec(
            ExecRequest::argv(["python3", "-I", "-B", "-c", junit_run::PL_JUNIT])
                .stdin(junit_run::input_json(kind, WORKSPACE, &out_dir, &[]))
                .timeout(req.run_timeout)
                .output_cap(64 << 10),
        )
        .await
        .map_err(|e| format!("sandbox failure during a test run: {e}"))?;
    let mut input = junit_snapshot_input(kind, &req.image.tests_dirs);
    input["out_dir"] = serde_json::Value::String(out_dir);
    let collected: Collected = tool(c, "collect", &input).await?;
    let text = res.output.render();
    let mut external = tree_changes(expected_tree, &collected.snapshot);
    let result: Option<junit_run::JunitResult> = collected
        .result
        .as_deref()
        .and_then(|r| serde_json::from_str(r).ok());
    match junit_run::marker(&text) {
        Err(e) => external.push(e),
        Ok(Some(m)) => {
            if res.status != ExecStatus::Exited(m.rc) {
                external.push(format!(
                    "the test harness returned {} but the process exited with {:?}",
                    m.rc, res.status
                ));
            }
            if m.result_sha256 != collected.result_sha256 {
                external.push("the harness result file changed after the harness returned".into());
            }
        }
        Ok(None) => {}
    }
    if let Some(r) = &result {
        for id in junit_run::early_exits(kind, r, WORKSPACE) {
            external.push(format!(
                "{id}: the test process exited 0 before libtest reported a result (the code under test ended it)"
            ));
        }
    }
    let (results, junit_problem) = match &result {
        None => (None, Some("the test harness wrote no result".to_string())),
        Some(r) => match junit_run::outcomes(kind, r, WORKSPACE) {
            Ok(m) => (Some(m), None),
            Err(e) => (None, Some(e)),
        },
    };
    let runner = result.and_then(|r| r.runner);
    let record = RunRecord {
        phase,
        index,
        scope: RunScope::All,
        exit: res.status,
        duration: res.duration,
        results,
        junit_problem,
        guard: GuardStatus::NotApplicable,
        external_findings: external,
        pytest: None,
        output_tail: tail_chars(&text, 3000).to_string(),
    };
    Ok((record, runner))
}
