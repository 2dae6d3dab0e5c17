//! `patchloop bench coverage`: what sampling buys, measured on a run's own candidates.
//!
//! Every candidate an eval run drew is in its trajectories, in drawing order, with its stage,
//! its shape and whether it passed the task's tests in the sandbox. Each passing one is given
//! the task's hidden check (the eval's own container, `hidden::run_check`), so a bug counts as
//! covered at draw k of a shape when one of the shape's first k draws passes the tests *and*
//! its hidden check. The table per shape (k = 1, 5, 10, 25, 50, 100) and per stage is what
//! the anytime search's budget split is read from; the verifier's precision on these
//! candidates (how many passing ones fail the hidden check) comes with it.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::PathBuf;

use anyhow::Context;
use serde::Serialize;

use crate::agent::origin::Origin;
use crate::bench::task::{Task, read_tasks};
use crate::eval::hidden::{self, HiddenCheck};

/// `patchloop bench coverage` flags.
#[derive(Debug, Clone, clap::Args)]
pub struct CoverageArgs {
    /// The run's tasks file (its hidden checks are `hidden/<instance id>.py` beside it).
    #[arg(long)]
    pub tasks: PathBuf,
    /// Directory of source snapshots.
    #[arg(long)]
    pub sources: PathBuf,
    /// The eval run whose candidates are measured.
    #[arg(long)]
    pub run_id: String,
    /// Where the run's results are.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
}

/// The draws at which coverage is reported.
pub const KS: [usize; 6] = [1, 5, 10, 25, 50, 100];

/// One drawn candidate, as the coverage counts it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Drawn {
    /// `candidates`, `shapes`, `sampled` (the attempt node's strategy).
    pub stage: String,
    /// `line`, `block`, `insert`, `body`, `rule`, `chat`.
    pub shape: String,
    /// Passed the task's tests in the sandbox.
    pub passing: bool,
    /// Passing and its hidden check passed (`None`: not passing, or the task has no check).
    pub hidden: Option<bool>,
    #[serde(skip)]
    pub diff: String,
}

/// The candidates of one trajectory, in drawing order. Pure.
pub fn drawn(t: &crate::eval::trajectory::Trajectory) -> Vec<Drawn> {
    t.nodes
        .iter()
        .filter(|n| n.node == "candidate")
        .map(|n| {
            let stage = n.id.split('.').nth(1).unwrap_or("candidates").to_string();
            let shape = match &n.origin {
                Some(Origin::Fill { shape, .. }) => shape.clone(),
                Some(Origin::Rule { .. }) => "rule".into(),
                Some(Origin::Chat { .. }) => "chat".into(),
                Some(Origin::Loop) | None => "other".into(),
            };
            Drawn {
                stage,
                shape,
                passing: n.status == "passing" || n.status == "verified",
                hidden: None,
                diff: n.diff.clone(),
            }
        })
        .collect()
}

/// Of `bugs` (each its draws in order), how many have a draw in `group`'s first k that passes
/// the tests and its hidden check, for each k of [`KS`]; and the number of bugs with any
/// draw in the group. `group` picks a draw's shape or stage. Pure.
pub fn coverage_at(bugs: &[Vec<Drawn>], group: impl Fn(&Drawn) -> &str, name: &str) -> Row {
    let mut covered = [0usize; KS.len()];
    let mut drew = 0;
    let mut draws = 0;
    for b in bugs {
        let mine: Vec<&Drawn> = b.iter().filter(|d| group(d) == name).collect();
        if mine.is_empty() {
            continue;
        }
        drew += 1;
        draws += mine.len();
        let first = mine.iter().position(|d| d.hidden == Some(true));
        for (i, k) in KS.iter().enumerate() {
            if first.is_some_and(|f| f < *k) {
                covered[i] += 1;
            }
        }
    }
    Row {
        name: name.to_string(),
        bugs: drew,
        draws,
        covered: covered.to_vec(),
    }
}

/// One line of the table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub name: String,
    /// Bugs with at least one draw of it.
    pub bugs: usize,
    pub draws: usize,
    /// Bugs covered within the first k draws, for each k of [`KS`].
    pub covered: Vec<usize>,
}

/// The whole measurement.
#[derive(Debug, Clone, Serialize)]
pub struct Coverage {
    pub run_id: String,
    pub bugs: usize,
    pub by_shape: Vec<Row>,
    pub by_stage: Vec<Row>,
    /// Passing candidates, and those whose hidden check failed (the verifier's would-be false
    /// positives, had they been chosen).
    pub passing: usize,
    pub passing_hidden_failed: usize,
}

/// The table over `bugs`. Pure.
pub fn summarize(run_id: &str, bugs: &[Vec<Drawn>]) -> Coverage {
    let mut shapes: Vec<String> = Vec::new();
    let mut stages: Vec<String> = Vec::new();
    for d in bugs.iter().flatten() {
        if !shapes.contains(&d.shape) {
            shapes.push(d.shape.clone());
        }
        if !stages.contains(&d.stage) {
            stages.push(d.stage.clone());
        }
    }
    let passing: Vec<&Drawn> = bugs.iter().flatten().filter(|d| d.passing).collect();
    let mut all = vec![coverage_at(bugs, |_| "all", "all")];
    all.extend(shapes.iter().map(|s| coverage_at(bugs, |d| &d.shape, s)));
    Coverage {
        run_id: run_id.to_string(),
        bugs: bugs.len(),
        by_shape: all,
        by_stage: stages
            .iter()
            .map(|s| coverage_at(bugs, |d| &d.stage, s))
            .collect(),
        passing: passing.len(),
        passing_hidden_failed: passing.iter().filter(|d| d.hidden == Some(false)).count(),
    }
}

/// The Markdown tables. Pure.
pub fn render(c: &Coverage) -> String {
    let mut s = format!(
        "# Coverage@k of run `{}` ({} bugs)\n\nA bug is covered at k when one of the first k draws of the shape (or stage) passes its tests and its hidden check. `bugs`: bugs with at least one such draw.\n",
        c.run_id, c.bugs
    );
    for (title, rows) in [("shape", &c.by_shape), ("stage", &c.by_stage)] {
        let ks: Vec<String> = KS.iter().map(|k| format!("@{k}")).collect();
        let _ = write!(
            s,
            "\n| {title} | bugs | draws | {} |\n|---|---:|---:|{}\n",
            ks.join(" | "),
            "---:|".repeat(KS.len())
        );
        for r in rows {
            let cells: Vec<String> = r.covered.iter().map(|n| n.to_string()).collect();
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} |",
                r.name,
                r.bugs,
                r.draws,
                cells.join(" | ")
            );
        }
    }
    let _ = writeln!(
        s,
        "\nPassing candidates: {}; of them {} fail their hidden check (what the verifier must tell apart).",
        c.passing, c.passing_hidden_failed
    );
    s
}

/// Run the hidden checks of every passing candidate of the run and write
/// `<results>/<run>/coverage.{json,md}`.
pub async fn cli(args: &CoverageArgs) -> anyhow::Result<Coverage> {
    let tasks: BTreeMap<String, Task> = read_tasks(&args.tasks)?
        .into_iter()
        .map(|t| (t.instance_id.clone(), t))
        .collect();
    let results = crate::eval::results::load_run(&args.results, &args.run_id)?;
    let docker = crate::sandbox::connect_and_reap().await?;
    let mut bugs = Vec::new();
    let dir = args.results.join(&args.run_id);
    for r in results.iter().filter(|r| r.attempt == 0) {
        let Some(task) = tasks.get(&r.instance_id) else {
            continue;
        };
        let Some(traj_file) = &r.trajectory else {
            continue;
        };
        let text = std::fs::read_to_string(dir.join("episodes").join(traj_file))
            .with_context(|| format!("reading the trajectory of {}", r.instance_id))?;
        let mut d = drawn(&crate::eval::trajectory::parse(&text));
        if d.iter().any(|x| x.passing)
            && let Some(check) = hidden::load(&args.tasks, &task.instance_id)?
        {
            check_all(&docker, args, task, &check, &mut d).await?;
        }
        eprintln!(
            "{}: {} draws, {} passing, {} pass the hidden check",
            r.instance_id,
            d.len(),
            d.iter().filter(|x| x.passing).count(),
            d.iter().filter(|x| x.hidden == Some(true)).count()
        );
        bugs.push(d);
    }
    let c = summarize(&args.run_id, &bugs);
    std::fs::write(dir.join("coverage.json"), serde_json::to_string_pretty(&c)?)?;
    std::fs::write(dir.join("coverage.md"), render(&c))?;
    Ok(c)
}

/// The hidden check on each passing draw of one task (one image for all of them).
async fn check_all(
    docker: &bollard::Docker,
    args: &CoverageArgs,
    task: &Task,
    check: &str,
    draws: &mut [Drawn],
) -> anyhow::Result<()> {
    let image = hidden::TaskImage::prepare(docker, &args.sources, task).await?;
    let run_id = format!("bench-coverage-{}", std::process::id());
    let mut result = Ok(());
    for d in draws.iter_mut().filter(|d| d.passing) {
        match hidden::run_check(docker, &image.image, &d.diff, check, &run_id).await {
            Ok(run) => d.hidden = Some(run.status == HiddenCheck::Passed),
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    image.remove(docker).await;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(stage: &str, shape: &str, hidden: Option<bool>) -> Drawn {
        Drawn {
            stage: stage.into(),
            shape: shape.into(),
            passing: hidden.is_some(),
            hidden,
            diff: String::new(),
        }
    }

    #[test]
    fn a_bug_is_covered_from_its_first_draw_that_passes_the_hidden_check() {
        let mut b1 = vec![d("candidates", "line", None); 7];
        // The 8th line draw passes its tests but fails the check; the 9th passes both.
        b1.push(d("candidates", "line", Some(false)));
        b1.push(d("sampled", "line", Some(true)));
        b1.push(d("shapes", "block", None));
        let b2 = vec![d("shapes", "block", Some(true))];
        let c = summarize("r", &[b1, b2]);
        let row = |name: &str| c.by_shape.iter().find(|r| r.name == name).unwrap().clone();
        assert_eq!(row("line").bugs, 1);
        assert_eq!(row("line").draws, 9);
        assert_eq!(row("line").covered, [0, 0, 1, 1, 1, 1], "covered at draw 9");
        assert_eq!(row("block").covered, [1, 1, 1, 1, 1, 1]);
        assert_eq!(
            row("all").covered,
            [1, 1, 2, 2, 2, 2],
            "b2 at draw 1, b1 at draw 9"
        );
        let stage = c.by_stage.iter().find(|r| r.name == "sampled").unwrap();
        assert_eq!((stage.bugs, stage.covered[0]), (1, 1));
        assert_eq!((c.passing, c.passing_hidden_failed), (3, 1));
        let md = render(&c);
        assert!(
            md.contains("| line | 1 | 9 | 0 | 0 | 1 | 1 | 1 | 1 |"),
            "{md}"
        );
        assert!(md.contains("Passing candidates: 3; of them 1 fail"), "{md}");
    }

    #[test]
    fn the_draws_come_from_the_trajectory_in_order_with_stage_and_shape() {
        let t = crate::eval::trajectory::parse(concat!(
            r#"{"kind":"node","id":"t0.candidates","node":"attempt","status":"running"}"#,
            "\n",
            r#"{"kind":"node","id":"t0.candidates.c0","node":"candidate","status":"failing","origin":{"by":"fill","at":"m.py:3","shape":"line","draw":"greedy"}}"#,
            "\n",
            r#"{"kind":"node","id":"t0.shapes.c1","node":"candidate","status":"passing","diff":"d","origin":{"by":"fill","at":"m.py:3","shape":"block","draw":"greedy"}}"#,
            "\n"
        ));
        let got: Vec<(String, String, bool)> = drawn(&t)
            .into_iter()
            .map(|x| (x.stage, x.shape, x.passing))
            .collect();
        assert_eq!(
            got,
            [
                ("candidates".into(), "line".into(), false),
                ("shapes".into(), "block".into(), true)
            ]
        );
    }
}
