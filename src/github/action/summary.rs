//! What a run reports (job summary, step outputs, annotations), apart from how it decides.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::{ActionEnd, ActionReport, EnvFn};
use crate::github::post::{Mode, Posted};
use crate::github::render::{fenced, sanitize_markdown};
use crate::github::{RepairOutcome, logs};

/// The job summary's table of strategies × model tiers: what each cost and how it ended.
/// Empty when the pipeline tried nothing (nothing failing, an error before the search). Pure.
pub fn attempts_table(attempts: &[crate::verify::receipt::RepairAttempt]) -> String {
    if attempts.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "| tier | model | strategy | result | tokens | model time | time | cost | candidates |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for a in attempts {
        let cands = if a.strategy != crate::config::repair::Strategy::Loop {
            format!("{} ({} passed)", a.candidates, a.passing)
        } else {
            "—".into()
        };
        s.push_str(&format!(
            "| {} | {} | {} | `{}` | {} | {:.1} s | {:.1} s | ${:.4} | {} |\n",
            a.tier,
            crate::github::render::model_label(&a.model).replace('|', "\\|"),
            a.strategy,
            a.result,
            a.tokens,
            a.model_ms as f64 / 1000.0,
            a.wall_ms as f64 / 1000.0,
            a.cost_usd,
            cands
        ));
    }
    s.push('\n');
    s
}

/// The job summary's line on the search's ledger: what it spent of each cap, per model tier
/// when it escalated, and the cap that stopped it. Pure.
pub fn spend_line(sp: &crate::verify::attempts::SpendReport) -> String {
    let cost_cap = if sp.max_cost_usd > 0.0 {
        format!(" of ${:.2}", sp.max_cost_usd)
    } else {
        " (no cap)".into()
    };
    let mut s = format!(
        "Budget: {} of {} tokens, ${:.4}{cost_cap}, {:.0} of {:.0} s (model {:.1} s)",
        sp.tokens,
        sp.max_tokens,
        sp.cost_usd,
        sp.wall_ms as f64 / 1000.0,
        sp.max_seconds,
        sp.model_ms as f64 / 1000.0
    );
    if sp.tiers.len() > 1 {
        let tiers: Vec<String> = sp
            .tiers
            .iter()
            .map(|t| format!("tier {}: {} tokens, ${:.4}", t.tier, t.tokens, t.cost_usd))
            .collect();
        s.push_str(&format!("; {}", tiers.join("; ")));
    }
    if let Some(cap) = sp.stopped_by {
        s.push_str(&format!("; stopped by the {} cap", cap.as_str()));
    }
    s.push_str("\n\n");
    s
}

pub(super) fn report(
    outcome: &RepairOutcome,
    posted: &Posted,
    extracted: &logs::Extracted,
    mode: Mode,
    workspace: &Path,
    notices: &[String],
) -> ActionReport {
    let mut outputs = BTreeMap::new();
    let verdict = outcome.verdict.action_word();
    outputs.insert("verdict".into(), verdict.into());
    // Relative to the workspace when inside it: later steps start there, on the host and in
    // containers alike, while an absolute path inside this (action) container means nothing
    // to a step on the host.
    let path = |p: &Option<PathBuf>| {
        p.as_ref()
            .map(|p| p.strip_prefix(workspace).unwrap_or(p).display().to_string())
            .unwrap_or_default()
    };
    outputs.insert("patch-path".into(), path(&outcome.patch_path));
    outputs.insert("receipt-path".into(), path(&outcome.receipt_json_path));
    outputs.insert(
        "comment-url".into(),
        posted
            .comment_url
            .clone()
            .or(posted.pr_url.clone())
            .unwrap_or_default(),
    );
    outputs.insert("cost-usd".into(), format!("{:.4}", outcome.cost_usd));
    outputs.insert("tokens".into(), outcome.tokens.to_string());

    let mut s = String::from("### patchloop\n\n");
    for n in notices.iter().chain(&posted.notices) {
        s.push_str(&format!("> {}\n\n", n.replace('\n', " ")));
    }
    s.push_str(&format!(
        "| verdict | mode | model | cost | tokens | time |\n|---|---|---|---|---|---|\n| `{}` | {} | {} | ${:.4} | {} | {:.0} s |\n\n",
        verdict,
        mode.as_str(),
        crate::github::render::model_label(&outcome.model).replace('|', "\\|"),
        outcome.cost_usd,
        outcome.tokens,
        outcome.seconds
    ));
    s.push_str(&attempts_table(&outcome.attempts));
    if let Some(sp) = &outcome.spend {
        s.push_str(&spend_line(sp));
    }
    if !extracted.failing_tests.is_empty() {
        s.push_str(&format!(
            "Failing tests from the logs: {}\n\n",
            extracted
                .failing_tests
                .iter()
                .map(|t| format!("`{t}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(why) = &posted.skipped {
        s.push_str(&format!("{why}\n\n"));
    }
    for l in &posted.log {
        // The first line says what was (or would be) done; the rest, if any, is the exact
        // body, shown as Markdown source so that a dry run shows what would be posted.
        let (head, body) = l.split_once('\n').unwrap_or((l.as_str(), ""));
        s.push_str(&format!("- {head}\n"));
        if !body.trim().is_empty() {
            s.push_str(&format!("\n{}\n\n", fenced("markdown", body)));
        }
    }
    if let Some(u) = &posted.comment_url {
        s.push_str(&format!("\nComment: {u}\n"));
    }
    if let Some(u) = &posted.pr_url {
        s.push_str(&format!("\nPull request: {u}\n"));
    }
    if !outcome.patch.is_empty() {
        s.push_str(&format!(
            "\n<details><summary>Diff</summary>\n\n{}\n\n</details>\n",
            fenced("diff", &outcome.patch)
        ));
    }
    if !outcome.verified() && !outcome.reason.trim().is_empty() {
        s.push_str(&format!(
            "\nWhy `{}`: {}\n",
            verdict,
            crate::github::render::reason_line(&outcome.reason)
        ));
    }
    if outcome.receipt_md.trim().is_empty() {
        s.push_str(
            "\nNo verification receipt: the run ended before a patch reached the verifier.\n",
        );
    } else {
        s.push_str(&format!(
            "\n<details><summary>Receipt</summary>\n\n{}\n\n</details>\n",
            sanitize_markdown(&outcome.receipt_md)
        ));
    }
    ActionReport {
        end: if posted.stale {
            ActionEnd::Ignored(posted.skipped.clone().unwrap_or_default())
        } else if outcome.verified() {
            ActionEnd::Fixed
        } else {
            ActionEnd::NoFix
        },
        outputs,
        summary: s,
        notices: Vec::new(),
    }
}

/// Append outputs (GITHUB_OUTPUT) and the summary (GITHUB_STEP_SUMMARY) when set.
pub fn write_files(report: &ActionReport, env: EnvFn<'_>) -> anyhow::Result<()> {
    use std::io::Write;
    let append = |var: &str, text: &str| -> anyhow::Result<()> {
        if let Some(p) = env(var).filter(|p| !p.is_empty()) {
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&p)
                .with_context(|| format!("opening {var} file {p}"))?;
            f.write_all(text.as_bytes())
                .with_context(|| format!("writing {var} file {p}"))?;
        }
        Ok(())
    };
    let mut out = String::new();
    for (k, v) in &report.outputs {
        // Values are single-line by construction; the heredoc form keeps it safe anyway.
        let delim = format!("patchloop_{}", hex::encode(sha2_short(v)));
        out.push_str(&format!("{k}<<{delim}\n{v}\n{delim}\n"));
    }
    append("GITHUB_OUTPUT", &out)?;
    append("GITHUB_STEP_SUMMARY", &report.summary)?;
    Ok(())
}

fn sha2_short(v: &str) -> Vec<u8> {
    use sha2::{Digest, Sha256};
    Sha256::digest(v.as_bytes())[..6].to_vec()
}

/// The workflow-command line for a notice or an error annotation.
pub fn annotation(level: &str, msg: &str) -> String {
    // Workflow commands end at a newline: encode it as the runner expects.
    let m = msg
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    format!("::{level} title=patchloop::{m}")
}
