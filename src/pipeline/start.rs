//! Where every strategy starts from: the baseline run (unless a task's targets need none),
//! the targets resolved against it, the failing-code context, the fault localization and
//! the task text.

use std::time::Instant;

use super::Plan;
use super::targets::{TargetSpec, Targets};
use crate::agent::candidates;
use crate::agent::task;
use crate::config::repair::Strategy;
use crate::sandbox::Sandbox;
use crate::testcmd::TestCommand;

/// What the first prompt and every strategy start from.
pub(super) struct Start {
    pub task: String,
    pub targets: Targets,
    /// Every test failing before (targets and pre-existing).
    pub failing: Vec<String>,
    pub problem: candidates::Problem,
    pub focus: crate::agent::context::Focus,
    /// How long the reproduction run took (`None`: none ran): the episode's later runs are
    /// cut at a few times it.
    pub baseline: Option<std::time::Duration>,
}

/// How the start went: something to repair, or nothing failing (the targets say what was
/// seen).
pub(super) enum Begun {
    Start(Box<Start>),
    NothingFailing(Targets),
}

/// The reproduction run (unless the targets are given and nothing needs its output), the
/// targets, the failing-code context and the task text.
pub(super) async fn start(sandbox: &dyn Sandbox, plan: &Plan) -> anyhow::Result<Begun> {
    let tools = &plan.episode.tools;
    let wants_context = tools.context_budget > 0 || plan.strategies.contains(&Strategy::Candidates);
    if plan.targets.is_given() && !wants_context {
        return Ok(Begun::Start(Box::new(Start {
            task: plan.statement.clone().unwrap_or_default(),
            targets: Targets::resolve(&plan.targets, &[]),
            failing: Vec::new(),
            problem: candidates::Problem::default(),
            focus: Default::default(),
            baseline: None,
        })));
    }
    // One run: the given task's traceback the context is read from, or the reproduction.
    let t_run = Instant::now();
    let (before, _) = super::reproduce(sandbox, tools).await?;
    let baseline = t_run.elapsed();
    // A suite that did not finish says nothing about what fails: stop, naming the limit.
    if let Some(t) = super::broken::timed_out(&before, &tools.test_cmd, tools.test_timeout) {
        return Err(t.into());
    }
    // A command that cannot run is the user's to fix, before any model call.
    if let Some(b) = super::broken::check(&before, &tools.test_cmd) {
        return Err(b.into());
    }
    let failing: Vec<String> = before
        .summary
        .as_ref()
        .map(|s| s.failing.clone())
        .unwrap_or_default();
    let targets = Targets::resolve(&plan.targets, &super::targets::ids(&failing));
    if let TargetSpec::Reproduce { named, .. } = &plan.targets {
        // Nothing to do: everything passes, or every named test passes (the failures left are
        // pre-existing). A run without a report still gets an episode.
        let named_pass =
            !named.is_empty() && before.summary.is_some() && targets.visible.is_empty();
        if before.green() || named_pass {
            return Ok(Begun::NothingFailing(targets));
        }
    }
    let target_ids = super::targets::strings(&targets.fail_to_pass);
    // Candidates read the code even when the prompt's context is off.
    let budget = match tools.context_budget {
        0 => crate::agent::context::DEFAULT_BUDGET,
        b => b,
    };
    let (mut context, mut files) =
        task::failing_context_files(sandbox, &before.output, &target_ids, budget).await;
    if context.focus.code.is_empty()
        && let Some(statement) = plan.statement.as_deref().filter(|s| !s.trim().is_empty())
    {
        // No traceback located code (the targets are held out, or nothing raised in the
        // repository): the functions the statement names.
        let listed = task::list_files(sandbox).await;
        let (code, read) = task::locate_named(sandbox, statement, &listed).await;
        context.focus.code = code;
        for (p, src) in read {
            files.entry(p).or_insert(src);
        }
    }
    // The targets the sandbox can run: a task's hidden tests exist only in the verifier's
    // container, so candidates are checked on the visible failing ones (none visible: on the
    // whole suite alone, and the verifier judges the targets).
    let visible = targets.visible_ids();
    // The candidates' suspects, and the loop's context when it has one.
    let t_loc = Instant::now();
    let (ranked, localization) = if wants_context {
        let named = failing_line_names(&before.output, &target_ids, &files);
        localize(
            sandbox,
            &tools.test_cmd,
            &visible,
            (&context.focus.code, &named),
            &mut files,
        )
        .await
    } else {
        (Vec::new(), String::new())
    };
    let localization_ms = t_loc.elapsed().as_millis() as u64;
    let test_sources = test_sources(sandbox, &visible, &files).await;
    let shown = if tools.context_budget > 0 {
        with_ranking(context.clone(), &ranked)
    } else {
        Default::default()
    };
    let text = if plan.targets.is_given() {
        let mut t = plan.statement.clone().unwrap_or_default();
        if !shown.text.is_empty() {
            t.push_str("\n\n");
            t.push_str(&shown.text);
        }
        t
    } else {
        let files = task::list_files(sandbox).await;
        task::build_task(
            &before,
            &visible,
            &targets.pre_existing_ids(),
            plan.statement.as_deref(),
            &files,
            &shown,
        )
    };
    // What the candidates' prompts and rules read: the targets' failures, not the others'.
    let others = targets.pre_existing_ids();
    let output = crate::agent::report::for_targets(&before.output, &target_ids, &others);
    let report = match plan.statement.as_deref() {
        Some(s) if plan.targets.is_given() && !s.trim().is_empty() => format!("{output}\n{s}"),
        _ => output,
    };
    Ok(Begun::Start(Box::new(Start {
        task: text,
        problem: candidates::Problem {
            targets: visible,
            report,
            context: context.clone(),
            files,
            ranked,
            localization,
            localization_ms,
            tests: test_sources,
        },
        targets,
        failing,
        focus: shown.focus,
        baseline: Some(baseline),
    })))
}

/// The files of the failing tests `targets` (read from the container unless in `files`).
async fn test_sources(
    sandbox: &dyn Sandbox,
    targets: &[String],
    files: &std::collections::BTreeMap<String, String>,
) -> Vec<crate::verify::oracle::TestSource> {
    let paths = crate::verify::oracle::test_files(targets);
    let missing: Vec<String> = paths
        .iter()
        .filter(|p| !files.contains_key(*p))
        .cloned()
        .collect();
    let read = task::read_files(sandbox, &missing).await;
    paths
        .into_iter()
        .filter_map(|p| {
            let text = files.get(&p).or_else(|| read.get(&p))?.clone();
            Some(crate::verify::oracle::TestSource { path: p, text })
        })
        .collect()
}

/// The names the failing tests' own lines where they failed use (their test-file frames;
/// [`crate::agent::localize::names_on`]): the localization's tie-break. Pure.
fn failing_line_names(
    output: &str,
    targets: &[String],
    files: &std::collections::BTreeMap<String, String>,
) -> Vec<String> {
    let plan = crate::agent::context::plan(output, targets);
    let lines: Vec<&str> = plan
        .frames
        .iter()
        .filter(|f| crate::agent::context::is_test_path(&f.path))
        .filter_map(|f| files.get(&f.path)?.lines().nth(f.line.checked_sub(1)?))
        .collect();
    crate::agent::localize::names_on(&lines)
}

/// The fault localization of the visible targets ([`crate::agent::localize`]): the ranked
/// functions (their files read into `files`) and a line saying how they were ranked. It never
/// quits silently: a tracer that runs no test under the project's pytest runs again under the
/// harness's; with no spectrum at all, the failing tests' traceback frames and calls rank
/// statically.
async fn localize(
    sandbox: &dyn Sandbox,
    test_cmd: &TestCommand,
    targets: &[String],
    (prefer, named): (&[crate::agent::context::Location], &[String]),
    files: &mut std::collections::BTreeMap<String, String>,
) -> (Vec<crate::agent::localize::Ranked>, String) {
    use crate::agent::localize::{self, Method};
    let t0 = Instant::now();
    let traced = match localize::spectrum(sandbox, test_cmd, targets, false).await {
        Ok(s) => Ok(s),
        Err(first) if first.contains("under the project's pytest") => {
            match localize::spectrum(sandbox, test_cmd, targets, true).await {
                Ok(s) => Ok(s),
                Err(second) => Err(format!("{first}; {second}")),
            }
        }
        Err(e) => Err(e),
    };
    let spectrum = match traced {
        Ok(s) => s,
        Err(why) => {
            tracing::info!("no spectrum: {why}");
            let ranked = localize::static_rank(prefer, named, files);
            let method = if ranked.is_empty() {
                Method::None { why }
            } else {
                Method::Static { why }
            };
            let note = format!(
                "{}: {} function(s) ranked in {} ms",
                method.label(),
                ranked.len(),
                t0.elapsed().as_millis()
            );
            tracing::info!("fault localization: {note}");
            return (ranked, note);
        }
    };
    let missing: Vec<String> = spectrum
        .lines
        .iter()
        .filter(|(p, l)| {
            !files.contains_key(*p)
                && !crate::agent::context::is_test_path(p)
                && l.iter().any(|h| h.ef > 0)
        })
        .map(|(p, _)| p.clone())
        .collect();
    files.extend(task::read_files(sandbox, &missing).await);
    let ranked = localize::rank(&spectrum, files, prefer, named);
    let sampled = match spectrum.collected {
        n if n > spectrum.ran => format!(" (of {n} in their files)"),
        _ => String::new(),
    };
    let method = Method::Spectrum {
        runner: match spectrum.runner.as_str() {
            "" => "the project".to_string(),
            r => format!("the {r}"),
        },
    };
    let note = format!(
        "{}: {} failing and {} passing test(s){sampled}: {} function(s) ranked in {} ms",
        method.label(),
        spectrum.failed,
        spectrum.passed,
        ranked.len(),
        t0.elapsed().as_millis()
    );
    tracing::info!("fault localization: {note}");
    (ranked, note)
}

/// Functions of the ranking named to the loop at most.
const RANKED_SHOWN: usize = 3;

/// The loop's context with the fault localization's best functions: listed under the
/// context's text, and first among the code locations the tools steer to. Pure.
fn with_ranking(
    mut context: crate::agent::context::Context,
    ranked: &[crate::agent::localize::Ranked],
) -> crate::agent::context::Context {
    let top: Vec<_> = ranked.iter().take(RANKED_SHOWN).collect();
    if top.is_empty() {
        return context;
    }
    let mut list = String::from(
        "Fault localization (the functions the failing tests run and the passing tests \
         rarely, most suspicious first):\n",
    );
    for r in &top {
        list.push_str(&format!(
            "- {}:{} {}\n",
            r.loc.path, r.loc.start, r.loc.name
        ));
    }
    context.text = if context.text.is_empty() {
        list
    } else {
        format!("{}\n\n{list}", context.text.trim_end())
    };
    let mut code: Vec<_> = top.iter().map(|r| r.loc.clone()).collect();
    for l in context.focus.code.drain(..) {
        if !code.iter().any(|c| c.path == l.path && c.start == l.start) {
            code.push(l);
        }
    }
    context.focus.code = code;
    context
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loop_context_lists_the_ranking_and_steers_to_it_first() {
        use crate::agent::context::{Context, Location};
        use crate::agent::localize::Ranked;
        let loc = |path: &str, start: usize, name: &str| Location {
            path: path.into(),
            start,
            end: start + 3,
            name: name.into(),
            frame_line: None,
        };
        let mut ctx = Context {
            text: "The failing test:\n...\n".into(),
            ..Default::default()
        };
        ctx.focus.code = vec![loc("pkg/a.py", 1, "caller"), loc("pkg/b.py", 9, "bug")];
        let ranked: Vec<Ranked> = [loc("pkg/b.py", 9, "bug"), loc("pkg/c.py", 2, "other")]
            .into_iter()
            .map(|loc| Ranked {
                loc,
                lines: Vec::new(),
            })
            .collect();
        let out = with_ranking(ctx.clone(), &ranked);
        assert!(out.text.starts_with("The failing test:"), "{}", out.text);
        assert!(
            out.text
                .ends_with("most suspicious first):\n- pkg/b.py:9 bug\n- pkg/c.py:2 other\n"),
            "{}",
            out.text
        );
        let names: Vec<&str> = out.focus.code.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["bug", "other", "caller"]);
        // No ranking: the context as it was.
        assert_eq!(with_ranking(ctx.clone(), &[]), ctx);
    }
}
