//! The field funnel: how far each task got on the way to a resolved repair, stage by stage —
//! prepared → the baseline reproduces the targets → the fault localization ranks the bug's
//! function in the top 3 → a candidate passes in the sandbox → verified → the hidden check
//! passes — and the first stage it dropped out at, with why. Pure.

use serde::{Deserialize, Serialize};

/// What an episode recorded for the funnel.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Funnel {
    /// The task's image was built.
    pub prepared: bool,
    /// The targets, and how many failed in the baseline run in the sandbox.
    pub targets: usize,
    pub reproduced: usize,
    /// The baseline run showed the test command cannot run: why, with its first error lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broken_command: Option<String>,
    /// How the fault localization ranked (its method and counts).
    #[serde(default)]
    pub localization: String,
    #[serde(default)]
    pub localization_ms: u64,
    /// The rank (1-based) of the function the gold patch changes among the ranked ones
    /// (`None`: not among them).
    #[serde(default)]
    pub bug_rank: Option<usize>,
    /// A candidate (or the loop's patch) passed the target tests in the sandbox.
    #[serde(default)]
    pub candidate_passed: bool,
}

/// The funnel's stages, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    Prepared,
    Reproduced,
    Localized,
    CandidatePassed,
    Verified,
    HiddenPassed,
}

pub const STAGES: [Stage; 6] = [
    Stage::Prepared,
    Stage::Reproduced,
    Stage::Localized,
    Stage::CandidatePassed,
    Stage::Verified,
    Stage::HiddenPassed,
];

impl Stage {
    pub fn label(self) -> &'static str {
        match self {
            Stage::Prepared => "prepared",
            Stage::Reproduced => "baseline reproduces the targets",
            Stage::Localized => "bug's function in the top 3",
            Stage::CandidatePassed => "a candidate passes",
            Stage::Verified => "verified",
            Stage::HiddenPassed => "hidden check passes",
        }
    }
}

/// Localization counts as reaching the bug when it ranks the changed function this high.
pub const TOP: usize = 3;

/// One task's outcome as the funnel reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome<'a> {
    pub funnel: Option<&'a Funnel>,
    /// Why the episode failed, when it did (infrastructure or configuration).
    pub error: Option<&'a str>,
    pub verified: bool,
    /// The hidden check passed (or the task has none).
    pub hidden_passed: bool,
}

impl Outcome<'_> {
    /// Whether the task reached `stage`. Localization is a diagnosis, not a gate: a task whose
    /// bug ranked lower can still pass later stages, and the table counts each stage alone.
    pub fn reached(&self, stage: Stage) -> bool {
        let Some(f) = self.funnel else {
            return false;
        };
        match stage {
            Stage::Prepared => f.prepared,
            Stage::Reproduced => {
                f.prepared
                    && f.broken_command.is_none()
                    && f.targets > 0
                    && f.reproduced == f.targets
            }
            Stage::Localized => f.bug_rank.is_some_and(|r| r <= TOP),
            Stage::CandidatePassed => f.candidate_passed || self.verified,
            Stage::Verified => self.verified,
            Stage::HiddenPassed => self.verified && self.hidden_passed,
        }
    }

    /// The first stage not reached, and why (`None`: resolved).
    pub fn dropped_at(&self) -> Option<(Stage, String)> {
        let f = self.funnel;
        for s in STAGES {
            if self.reached(s) {
                continue;
            }
            let why = match (s, f) {
                (_, None) => self.error.unwrap_or("no funnel recorded").to_string(),
                (Stage::Prepared, _) => self.error.unwrap_or("prepare failed").to_string(),
                (Stage::Reproduced, Some(f)) => match &f.broken_command {
                    Some(b) => b.clone(),
                    None if f.targets == 0 => "no targets".into(),
                    None => format!(
                        "{} of {} targets failed in the baseline run{}",
                        f.reproduced,
                        f.targets,
                        self.error.map(|e| format!(" ({e})")).unwrap_or_default()
                    ),
                },
                (Stage::Localized, Some(f)) => match f.bug_rank {
                    Some(r) => format!("ranked {r} ({})", f.localization),
                    None => format!("not ranked ({})", f.localization),
                },
                (Stage::CandidatePassed, _) => self
                    .error
                    .unwrap_or("no candidate passed the target tests")
                    .to_string(),
                (Stage::Verified, _) => "a passing patch was not verified".into(),
                (Stage::HiddenPassed, _) => "the hidden check failed".into(),
            };
            return Some((s, why));
        }
        None
    }
}

/// The rank (1-based) of the first of `ranked` (path, first line, last line) that contains a
/// line the gold `patch` changes in the buggy tree; `None` when none does or the patch does not
/// parse.
pub fn bug_rank(patch: &str, ranked: &[(String, usize, usize)]) -> Option<usize> {
    let files = crate::verify::diff::parse(patch).ok()?;
    let mut changed: Vec<(String, usize)> = Vec::new();
    for f in &files {
        let Some(path) = f.old_path.as_deref() else {
            continue;
        };
        for h in &f.hunks {
            let mut old = h.old_start;
            for l in &h.lines {
                match l {
                    crate::verify::diff::HunkLine::Context(_) => old += 1,
                    crate::verify::diff::HunkLine::Removed(_) => {
                        changed.push((path.to_string(), old));
                        old += 1;
                    }
                    // An insertion sits between the line before and the line after it.
                    crate::verify::diff::HunkLine::Added(_) => {
                        changed.push((path.to_string(), old.saturating_sub(1).max(1)));
                        changed.push((path.to_string(), old));
                    }
                }
            }
        }
    }
    ranked
        .iter()
        .position(|(p, start, end)| {
            changed
                .iter()
                .any(|(cp, l)| cp == p && (*start..=*end).contains(l))
        })
        .map(|i| i + 1)
}

/// One task's row for [`render`]: its id, its outcome, and where its time went (ms:
/// prepare, localization, the episode, verification).
pub struct Row<'a> {
    pub instance_id: &'a str,
    pub outcome: Outcome<'a>,
    pub ms: [Option<u64>; 4],
}

fn median(mut v: Vec<u64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2] as f64
    } else {
        (v[n / 2 - 1] + v[n / 2]) as f64 / 2.0
    })
}

/// The funnel as Markdown: tasks reaching each stage, median stage timings, and each task's
/// first drop-out with why. Empty when no row recorded a funnel.
pub fn render(rows: &[Row]) -> String {
    use std::fmt::Write;
    if rows.iter().all(|r| r.outcome.funnel.is_none()) {
        return String::new();
    }
    let n = rows.len();
    let mut s = String::from(
        "\n## Funnel (first attempts)\n\n| stage | tasks | share |\n|---|---:|---:|\n",
    );
    for st in STAGES {
        let k = rows.iter().filter(|r| r.outcome.reached(st)).count();
        let _ = writeln!(
            s,
            "| {} | {k}/{n} | {:.1}% |",
            st.label(),
            k as f64 * 100.0 / n.max(1) as f64
        );
    }
    let names = ["prepare", "localization", "episode", "verification"];
    let parts: Vec<String> = (0..4)
        .filter_map(|i| {
            median(rows.iter().filter_map(|r| r.ms[i]).collect())
                .map(|m| format!("{} {:.1} s", names[i], m / 1000.0))
        })
        .collect();
    if !parts.is_empty() {
        let _ = writeln!(s, "\nMedian stage times: {}.", parts.join(" · "));
    }
    let dropped: Vec<(&str, Stage, String)> = rows
        .iter()
        .filter_map(|r| {
            r.outcome
                .dropped_at()
                .map(|(st, why)| (r.instance_id, st, why))
        })
        .collect();
    if !dropped.is_empty() {
        s.push_str("\nFirst stage each task missed (localization is a diagnosis: a task can miss it and still be resolved):\n\n| task | missed | why |\n|---|---|---|\n");
        for (id, st, why) in dropped {
            let why: String = why
                .replace('\n', " ")
                .replace('|', "\\|")
                .chars()
                .take(240)
                .collect();
            let _ = writeln!(s, "| {id} | {} | {why} |", st.label());
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOLD: &str = "--- a/pkg/m.py\n+++ b/pkg/m.py\n@@ -10,3 +10,3 @@ def f(x):\n     a = 1\n-    return x - a\n+    return x + a\n \n";

    #[test]
    fn the_bug_is_ranked_where_its_function_is() {
        let ranked = vec![
            ("pkg/other.py".to_string(), 1, 30),
            ("pkg/m.py".to_string(), 1, 5),
            ("pkg/m.py".to_string(), 9, 12),
        ];
        assert_eq!(bug_rank(GOLD, &ranked), Some(3));
        assert_eq!(bug_rank(GOLD, &ranked[..2]), None);
        assert_eq!(bug_rank("not a patch", &ranked), None);
    }

    #[test]
    fn the_first_stage_missed_is_named_with_why() {
        let f = Funnel {
            prepared: true,
            targets: 2,
            reproduced: 2,
            localization: "spectrum (the harness's pytest)".into(),
            bug_rank: Some(5),
            candidate_passed: true,
            ..Default::default()
        };
        let o = Outcome {
            funnel: Some(&f),
            error: None,
            verified: true,
            hidden_passed: false,
        };
        assert!(o.reached(Stage::Verified));
        let (s, why) = o.dropped_at().unwrap();
        assert_eq!(s, Stage::Localized);
        assert!(why.contains("ranked 5"), "{why}");
        let broken = Funnel {
            prepared: true,
            broken_command: Some("the test command cannot run: exit 127".into()),
            ..Default::default()
        };
        let o = Outcome {
            funnel: Some(&broken),
            error: Some("the test command cannot run: exit 127"),
            verified: false,
            hidden_passed: false,
        };
        assert_eq!(o.dropped_at().unwrap().0, Stage::Reproduced);
        let done = Funnel {
            bug_rank: Some(1),
            ..f.clone()
        };
        let o = Outcome {
            funnel: Some(&done),
            error: None,
            verified: true,
            hidden_passed: true,
        };
        assert_eq!(o.dropped_at(), None);
    }
}
