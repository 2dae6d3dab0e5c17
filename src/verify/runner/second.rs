//! The second runner: the fail-to-pass tests once more without pytest, its answer one
//! nonce-tagged line.

use std::collections::BTreeMap;

use super::VerifyRequest;
use crate::sandbox::output::tail_chars;
use crate::sandbox::{ExecRequest, Sandbox, WORKSPACE};
use crate::verify::{harness, verdict};

const SECOND_MARKER: &str = "@@PATCHLOOP-SECOND@@ ";

/// The fail-to-pass tests once more, in a fresh process under the harness's own minimal
/// runner (`pl_second.py`: no pytest, no conftest, no PYTEST_* variables).
pub(super) async fn second_run(
    c: &dyn Sandbox,
    plan: &harness::RunPlan,
    req: &VerifyRequest,
) -> Result<verdict::SecondRun, String> {
    let nonce = format!("{:016x}", rand::random::<u64>());
    let stdin = serde_json::json!({
        "workspace": WORKSPACE,
        "paths": plan.paths,
        "ids": req.fail_to_pass,
        "nonce": nonce,
    })
    .to_string();
    let res = c
        .exec(
            ExecRequest::argv(["python3", "-I", "-B", "-c", harness::PL_SECOND])
                .stdin(stdin)
                .timeout(req.run_timeout)
                .output_cap(1 << 20),
        )
        .await
        .map_err(|e| format!("sandbox failure during the second runner: {e}"))?;
    Ok(parse_second(&res.output.render(), &nonce))
}

/// Exactly one result line carrying this run's nonce is expected.
pub(super) fn parse_second(output: &str, nonce: &str) -> verdict::SecondRun {
    let prefix = format!("{SECOND_MARKER}{nonce} ");
    let lines: Vec<&str> = output
        .lines()
        .filter_map(|l| l.find(&prefix).map(|i| &l[i + prefix.len()..]))
        .collect();
    let problem = |p: String| verdict::SecondRun {
        results: BTreeMap::new(),
        problem: Some(p),
    };
    match lines.as_slice() {
        [one] => match serde_json::from_str(one) {
            Ok(results) => verdict::SecondRun {
                results,
                problem: None,
            },
            Err(e) => problem(format!("the second runner's result is unreadable ({e})")),
        },
        [] => problem(format!(
            "the second runner reported no result: {}",
            tail_chars(output, 300).trim()
        )),
        more => problem(format!(
            "{} second-runner result lines (something printed fakes)",
            more.len()
        )),
    }
}
