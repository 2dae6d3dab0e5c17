//! What each verification layer said over a run's receipts (first attempts): how often it ran
//! clean, found something, did not run, or did not apply, and the commonest reasons it did not
//! run. A layer that seldom ran is seldom evidence, whatever the verdicts say: the table shows
//! how often the candidates' comparison and the differential actually decided something.
//! Pure; [`read`] is the one place that touches the disk.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::eval::results::EpisodeResult;

/// One layer's rows over the receipts read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    pub layer: String,
    pub clean: usize,
    pub findings: usize,
    pub not_run: usize,
    pub not_applicable: usize,
    /// Why it did not run: the detail up to its first `(`, `:` or `;`, and how often.
    pub why_not: BTreeMap<String, usize>,
}

/// The receipts of the first attempts that have one (an episode stopped before verification
/// has none), and how many first attempts had none.
pub fn read(run_dir: &Path, results: &[EpisodeResult]) -> (Vec<serde_json::Value>, usize) {
    let mut out = Vec::new();
    let mut missing = 0;
    for r in results.iter().filter(|r| r.attempt == 0) {
        let path = run_dir.join("receipts").join(format!(
            "{}.json",
            EpisodeResult::file_stem(&r.instance_id, 0)
        ));
        match std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
        {
            Some(v) => out.push(v),
            None => missing += 1,
        }
    }
    (out, missing)
}

/// Per layer, in the order the receipts list them.
pub fn tally(receipts: &[serde_json::Value]) -> Vec<Tally> {
    let mut out: Vec<Tally> = Vec::new();
    for r in receipts {
        for l in r["layers"].as_array().into_iter().flatten() {
            let Some(name) = l["layer"].as_str() else {
                continue;
            };
            let at = match out.iter().position(|t| t.layer == name) {
                Some(at) => at,
                None => {
                    out.push(Tally {
                        layer: name.to_string(),
                        ..Tally::default()
                    });
                    out.len() - 1
                }
            };
            let t = &mut out[at];
            match l["status"].as_str().unwrap_or("") {
                "clean" => t.clean += 1,
                "findings" => t.findings += 1,
                "not_applicable" => t.not_applicable += 1,
                _ => {
                    t.not_run += 1;
                    let detail = l["detail"].as_str().unwrap_or("");
                    let why = detail
                        .split(['(', ':', ';'])
                        .next()
                        .unwrap_or("")
                        .trim()
                        .to_string();
                    *t.why_not.entry(why).or_default() += 1;
                }
            }
        }
    }
    out
}

/// The Markdown section; empty when no receipt was read.
pub fn render(tallies: &[Tally], receipts: usize, missing: usize) -> String {
    if receipts == 0 {
        return String::new();
    }
    let mut s = format!(
        "\n## Verification layers (first attempts: {receipts} receipt(s){})\n\n",
        if missing > 0 {
            format!(", {missing} episode(s) without one")
        } else {
            String::new()
        }
    );
    s.push_str("| layer | clean | findings | not run | not applicable | commonest reason not run |\n|---|---:|---:|---:|---:|---|\n");
    for t in tallies {
        let why = t
            .why_not
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
            .map_or(String::new(), |(w, n)| format!("{w} ({n})"));
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} |",
            t.layer,
            t.clean,
            t.findings,
            t.not_run,
            t.not_applicable,
            why.replace('|', "\\|")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receipt(rows: &[(&str, &str, &str)]) -> serde_json::Value {
        serde_json::json!({
            "layers": rows
                .iter()
                .map(|(l, s, d)| serde_json::json!({"layer": l, "status": s, "detail": d}))
                .collect::<Vec<_>>()
        })
    }

    #[test]
    fn layers_are_counted_by_status_with_their_commonest_reason_not_run() {
        let rs = [
            receipt(&[
                ("differential", "clean", "2 changed function(s)"),
                (
                    "consensus",
                    "not_run",
                    "no other passing candidate to compare (one passed)",
                ),
            ]),
            receipt(&[
                (
                    "differential",
                    "not_run",
                    "no generated input was tested: x",
                ),
                ("consensus", "findings", "2 passing candidate(s) compared"),
            ]),
            receipt(&[
                ("differential", "findings", "1 changed function(s)"),
                (
                    "consensus",
                    "not_run",
                    "no other passing candidate to compare (the patch is not the search's)",
                ),
            ]),
        ];
        let t = tally(&rs);
        assert_eq!(
            t.iter().map(|x| x.layer.as_str()).collect::<Vec<_>>(),
            ["differential", "consensus"]
        );
        assert_eq!((t[0].clean, t[0].findings, t[0].not_run), (1, 1, 1));
        assert_eq!((t[1].clean, t[1].findings, t[1].not_run), (0, 1, 2));
        let md = render(&t, 3, 1);
        assert!(
            md.contains("3 receipt(s), 1 episode(s) without one"),
            "{md}"
        );
        assert!(
            md.contains(
                "| consensus | 0 | 1 | 2 | 0 | no other passing candidate to compare (2) |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| differential | 1 | 1 | 1 | 0 | no generated input was tested (1) |"),
            "{md}"
        );
        assert_eq!(render(&[], 0, 4), "");
    }
}
