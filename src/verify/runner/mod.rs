//! The verification run: policy, a fresh container, N unpatched runs, the patch, N patched runs,
//! the verdict and the receipt. Every failure becomes a verdict; nothing here panics or returns
//! early without a receipt.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use bollard::Docker;
use serde::{Deserialize, Serialize};

pub use super::exec::PreparedImage;
use super::exec::{apply_patch, snapshot, tool};
use super::fit::FitReport;
use super::harness::{self, HarnessConfig};
use super::junit_run;
use super::policy::{self, BaseTree, PolicyConfig, Violation};
use super::receipt::{self, ImageInfo, PatchInfo, Receipt, ReceiptInputs};
use super::scan;
use super::verdict::{self, Decision, Inputs, Phase, RunRecord, RunScope, Verdict};
use crate::sandbox::container::Container;
use crate::sandbox::lang::{LABEL_KIND, ProjectKind};
use crate::sandbox::policy::ContainerPolicy;
use crate::sandbox::{Sandbox, WORKSPACE};

mod checks;
mod generalisation;
mod runs;
mod second;

use generalisation::fit_layers;
use runs::{one_run, one_run_junit};
use second::second_run;

/// A held-out test file, copied into the workspace only for verification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holdout {
    /// Workspace-relative destination.
    pub dest: String,
    pub contents: Vec<u8>,
}

#[derive(Debug, Clone)]
pub struct VerifyRequest {
    pub image: PreparedImage,
    pub patch: String,
    pub fail_to_pass: Vec<String>,
    pub pass_to_pass: Vec<String>,
    /// Runs before and after the patch (each).
    pub reruns: usize,
    /// What the re-runs after the first run of each phase select.
    pub rerun_scope: RerunScope,
    pub holdouts: Vec<Holdout>,
    /// Test globs, allowed CI paths, limits; `tests_dirs` is filled from the image.
    pub policy: PolicyConfig,
    pub container_policy: ContainerPolicy,
    pub run_timeout: Duration,
    pub run_id: String,
    /// The generalisation layers (issue #23): run on a patch every other layer lets through.
    pub fit: FitOptions,
}

pub use crate::verify::layers::FitOptions;

/// Which tests the re-runs select. `All`: every run is the whole suite. `FailToPass`: each
/// phase's first run is the whole suite and the other runs only the fail-to-pass tests, so
/// those still pass (or fail) N/N while the rest of the suite is judged on one run per phase;
/// a new failure in the patched full run brings back full re-runs (regression or flake).
/// Python only; Rust/Node runs are always whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RerunScope {
    #[default]
    All,
    FailToPass,
}

impl VerifyRequest {
    pub fn new(image: PreparedImage, patch: String, fail_to_pass: Vec<String>) -> Self {
        VerifyRequest {
            image,
            patch,
            fail_to_pass,
            pass_to_pass: Vec::new(),
            reruns: 3,
            rerun_scope: RerunScope::All,
            holdouts: Vec::new(),
            policy: PolicyConfig::default(),
            container_policy: ContainerPolicy::default(),
            run_timeout: Duration::from_secs(900),
            run_id: format!("verify-{:08x}", rand::random::<u32>()),
            fit: FitOptions::default(),
        }
    }
}

struct Ctx<'a> {
    req: &'a VerifyRequest,
    /// From the image's `patchloop.kind` label: Python runs hardened pytest, Rust and Node the
    /// JUnit harness.
    kind: ProjectKind,
    started: Instant,
    image_id: Option<String>,
    /// The prepared image's environment note, repeated in the receipt.
    env_note: Option<String>,
    container_policy: ContainerPolicy,
    patch_info: PatchInfo,
    violations: Vec<Violation>,
    command: Vec<String>,
    before: Vec<RunRecord>,
    after: Vec<RunRecord>,
    /// The semantic patch analysis: files scanned and capabilities the patch adds.
    analysis: receipt::AnalysisInfo,
    /// The second, independent runner of the fail-to-pass tests (Python only).
    second: Option<verdict::SecondRun>,
    /// The generalisation layers, when the patch got that far.
    fit: Option<FitReport>,
}

impl Ctx<'_> {
    fn finish(self, setup_error: Option<String>) -> Receipt {
        let decision = verdict::decide(&Inputs {
            violations: &self.violations,
            setup_error,
            fail_to_pass: &self.req.fail_to_pass,
            pass_to_pass: &self.req.pass_to_pass,
            before: &self.before,
            after: &self.after,
        });
        let decision = verdict::with_analysis(decision, &self.analysis.findings);
        let decision =
            verdict::with_second_runner(decision, self.second.as_ref(), &self.req.fail_to_pass);
        let mut decision = verdict::with_fit(
            decision,
            self.fit.as_ref().map_or(&[][..], |f| f.findings.as_slice()),
        );
        // "No JUnit" is only actionable together with what was run.
        if decision.verdict == Verdict::Error
            && decision.reason.contains("JUnit")
            && !self.command.is_empty()
        {
            decision.reason = format!("{} [command: {}]", decision.reason, self.command.join(" "));
        }
        self.build(decision)
    }

    fn build(self, decision: Decision) -> Receipt {
        receipt::build(ReceiptInputs {
            decision,
            reruns: self.req.reruns,
            image: ImageInfo {
                tag: self.req.image.tag.clone(),
                id: self.image_id,
                note: self.env_note,
            },
            container_policy: self.container_policy,
            patch: self.patch_info,
            violations: self.violations,
            command: self.command,
            holdout_files: self.req.holdouts.iter().map(|h| h.dest.clone()).collect(),
            fail_to_pass: &self.req.fail_to_pass,
            before: self.before,
            after: self.after,
            analysis: self.analysis,
            second_runner: self.second,
            fit: self.fit,
            total_ms: self.started.elapsed().as_millis() as u64,
        })
    }
}

/// A receipt for a verification that could not start (no Docker, no image, unreadable input).
/// The patch policy still runs (it needs no container), so a forbidden patch says so.
pub fn error_receipt(req: &VerifyRequest, reason: String, base: &dyn BaseTree) -> Receipt {
    let (files, violations) = if req.patch.is_empty() {
        (Vec::new(), Vec::new())
    } else {
        let mut pcfg = req.policy.clone();
        pcfg.tests_dirs = req.image.tests_dirs.clone();
        let r = policy::check(&req.patch, &pcfg, base);
        (r.files, r.violations)
    };
    let ctx = Ctx {
        req,
        kind: ProjectKind::Python,
        started: Instant::now(),
        image_id: None,
        env_note: None,
        container_policy: req.container_policy.clone(),
        patch_info: PatchInfo::new(&req.patch, &files),
        violations,
        command: Vec::new(),
        before: Vec::new(),
        after: Vec::new(),
        analysis: Default::default(),
        second: None,
        fit: None,
    };
    ctx.finish(Some(reason))
}

/// Verify a patch. Always returns a receipt; infrastructure failures are verdict `error`.
pub async fn verify(docker: &Docker, req: &VerifyRequest, base: &dyn BaseTree) -> Receipt {
    let started = Instant::now();
    // The image's kind decides the policy's language rules and how tests run.
    let inspected = docker.inspect_image(&req.image.tag).await;
    let kind = inspected
        .as_ref()
        .ok()
        .and_then(|i| i.config.as_ref())
        .and_then(|c| c.labels.as_ref())
        .and_then(|l| l.get(LABEL_KIND))
        .map_or(ProjectKind::Python, |k| ProjectKind::parse(k));
    let mut pcfg = req.policy.clone();
    pcfg.tests_dirs = req.image.tests_dirs.clone();
    pcfg.kind = kind;
    // Where new top-level modules would be importable from: the root, the usual `src`, and
    // what the test command puts on PYTHONPATH.
    let cmd_paths = harness::from_test_cmd(&req.image.test_cmd).paths;
    for p in ["".to_string(), "src".to_string()].into_iter().chain(
        cmd_paths
            .iter()
            .filter_map(|p| p.strip_prefix(&format!("{WORKSPACE}/")).map(str::to_string)),
    ) {
        if !pcfg.import_roots.contains(&p) {
            pcfg.import_roots.push(p);
        }
    }
    let report = policy::check(&req.patch, &pcfg, base);
    let mut container_policy = req.container_policy.clone();
    // Every verification run is its own Docker exec: the step loop's output is not trusted
    // for verdicts (code under test shares the loop's uid; see sandbox::steploop).
    container_policy.step_loop = false;
    // Held-out files must be written into the test directories, so those cannot be read-only
    // mounts then; the snapshot check after every run covers them instead.
    container_policy.read_only_paths = if req.holdouts.is_empty() {
        req.image.tests_dirs.clone()
    } else {
        Vec::new()
    };
    let mut ctx = Ctx {
        req,
        kind,
        started,
        image_id: None,
        env_note: None,
        container_policy,
        patch_info: PatchInfo::new(&req.patch, &report.files),
        violations: report.violations.clone(),
        command: Vec::new(),
        before: Vec::new(),
        after: Vec::new(),
        analysis: Default::default(),
        second: None,
        fit: None,
    };
    if !ctx.violations.is_empty() {
        return ctx.finish(None);
    }
    if let Some(bad) = req
        .holdouts
        .iter()
        .find(|h| policy::safe_path(&h.dest).is_err())
    {
        return ctx.finish(Some(format!(
            "held-out file destination `{}` is not a safe workspace-relative path",
            bad.dest
        )));
    }
    match inspected {
        Ok(info) => {
            ctx.env_note = info
                .config
                .as_ref()
                .and_then(|c| c.labels.as_ref())
                .and_then(|l| l.get(crate::sandbox::image::LABEL_ENV_NOTE))
                .cloned();
            ctx.image_id = info.id
        }
        Err(e) => {
            let msg = format!(
                "image `{}` is not available ({e}); build it with `patchloop prepare`",
                req.image.tag
            );
            return ctx.finish(Some(msg));
        }
    }
    // The generalisation layers get a container of their own, started beside this one, so
    // they run while the patched re-runs do (`run_all`). Without one they run after them.
    let wants_spare = !kind.uses_junit_harness()
        && crate::verify::layers::LAYERS
            .iter()
            .any(|l| l.asked(&req.fit));
    let start = |role| {
        Container::start(
            docker,
            &req.image.tag,
            &ctx.container_policy,
            &req.run_id,
            role,
        )
    };
    let (main, spare) = if wants_spare {
        let (m, s) = tokio::join!(start("verify"), start("verify-fit"));
        let s = s
            .map_err(|e| {
                tracing::warn!(
                    "no spare container ({e}); the generalisation layers run after the tests"
                )
            })
            .ok();
        (m, s)
    } else {
        (start("verify").await, None)
    };
    let container = match main {
        Ok(c) => c,
        Err(e) => {
            if let Some(s) = spare {
                let _ = s.remove().await;
            }
            let msg = format!("starting the verification container failed: {e}");
            return ctx.finish(Some(msg));
        }
    };
    let setup_error = run_all(
        &container,
        spare.as_ref().map(|s| s as &dyn Sandbox),
        &mut ctx,
        &report.new_modules,
        &report.files,
    )
    .await
    .err();
    let _ = container.remove().await;
    if let Some(s) = spare {
        let _ = s.remove().await;
    }
    ctx.finish(setup_error)
}

/// The container part; an `Err` is the setup error of the receipt. `spare`: a second
/// container of the same image where the generalisation layers run beside the patched re-runs.
async fn run_all(
    c: &dyn Sandbox,
    spare: Option<&dyn Sandbox>,
    ctx: &mut Ctx<'_>,
    new_modules: &[String],
    files: &[super::diff::FilePatch],
) -> Result<(), String> {
    let req = ctx.req;
    put_holdouts(c, req).await?;
    if ctx.kind.uses_junit_harness() {
        return run_all_junit(c, ctx).await;
    }
    let setup: Setup = tool(
        c,
        "setup",
        &serde_json::json!({
            "workspace": WORKSPACE,
            "tests_dirs": req.image.tests_dirs,
            "names": new_modules,
        }),
    )
    .await?;
    // The baseline as the read-only helper sees it (it starts here): later snapshots come
    // from the same reader, so file permissions cannot make them differ.
    let baseline = snapshot(c, &req.image.tests_dirs).await?;
    // Shadowing: does a new top-level name resolve in the unpatched image?
    let v = policy::shadow_violations(new_modules, &|n| {
        setup.found.get(n).copied().unwrap_or(true)
    });
    if !v.is_empty() {
        ctx.violations.extend(v);
        return Ok(());
    }
    let hcfg = setup.ini;
    let plan = harness::plan(
        &hcfg,
        &req.image.test_cmd,
        &req.image.tests_dirs,
        &req.fail_to_pass,
        &req.pass_to_pass,
    );
    ctx.command = plan.display_command();
    let targets: Vec<String> = req
        .fail_to_pass
        .iter()
        .chain(&req.pass_to_pass)
        .cloned()
        .collect();

    // The focused plan re-runs only the fail-to-pass tests after one full run per phase (see
    // `RerunScope`); a patched full run with any new failure brings back full re-runs.
    let focused_plan = harness::RunPlan {
        selection: req.fail_to_pass.clone(),
        ..plan.clone()
    };
    let focused = req.rerun_scope == RerunScope::FailToPass;
    let pick = |i: usize, full: bool| {
        if i == 0 || full || !focused {
            (&plan, RunScope::All, targets.as_slice())
        } else {
            (
                &focused_plan,
                RunScope::FailToPass,
                req.fail_to_pass.as_slice(),
            )
        }
    };

    for i in 0..req.reruns.max(1) {
        let (p, scope, t) = pick(i, false);
        let r = one_run(c, p, scope, Phase::Before, i, t, &baseline, req).await?;
        ctx.before.push(r);
    }
    if baseline_decides(ctx) {
        return Ok(());
    }
    // Doctests are tests inside the code: the files whose doctests the unpatched runs
    // collected may not have their examples edited.
    let ran: Vec<&str> = ctx
        .before
        .iter()
        .filter_map(|r| r.results.as_ref())
        .flat_map(|m| m.keys().map(String::as_str))
        .chain(req.fail_to_pass.iter().map(String::as_str))
        .collect();
    let edits = policy::doctest_edits(files, &policy::doctest_files(ran));
    if !edits.is_empty() {
        ctx.violations.extend(edits);
        return Ok(());
    }

    // The semantic analysis reads the sources the runs will import: the pre-patch text now
    // (the snapshots showed the runs left the tree as it was), the post-patch text right after
    // `git apply`, before any patched code has run.
    let scanned = scan::targets(files, &req.image.tests_dirs, &req.policy);
    let pre_paths: Vec<&String> = scanned.iter().filter_map(|(_, p)| p.as_ref()).collect();
    let pre: BTreeMap<String, Option<String>> = if pre_paths.is_empty() {
        BTreeMap::new()
    } else {
        tool(
            c,
            "sources",
            &serde_json::json!({"workspace": WORKSPACE, "paths": pre_paths}),
        )
        .await?
    };
    apply_patch(c, &req.patch).await?;
    let mut post: BTreeMap<String, Option<String>> = BTreeMap::new();
    if !scanned.is_empty() {
        let post_paths: Vec<&String> = scanned.iter().map(|(p, _)| p).collect();
        post = tool(
            c,
            "sources",
            &serde_json::json!({"workspace": WORKSPACE, "paths": post_paths}),
        )
        .await?;
        ctx.analysis = scan::analyse(&scanned, &pre, &post);
    }
    let patched = snapshot(c, &req.image.tests_dirs).await?;
    let (p, scope, t) = pick(0, false);
    let first = one_run(c, p, scope, Phase::After, 0, t, &patched, req).await?;
    let full = focused && new_failures(&ctx.before[0], &first, &req.fail_to_pass);
    ctx.after.push(first);
    // Fixed or fitted: asked only of a patch every integrity layer lets through. When the
    // first patched run already passes, they start now on the spare container (its own copy
    // of the workspace: the probe takes the patch back and forth there) and their report is
    // kept only if the remaining runs let the patch through too.
    let early = spare.filter(|_| so_far(ctx).verdict == Verdict::Verified);
    // The rest of the patched runs and the second runner, on this container.
    let rest = async {
        for i in 1..req.reruns.max(1) {
            let (p, scope, t) = pick(i, full);
            let r = one_run(c, p, scope, Phase::After, i, t, &patched, req).await?;
            ctx.after.push(r);
        }
        ctx.second = Some(second_run(c, &plan, req).await?);
        Ok::<(), String>(())
    };
    let fit = match early {
        Some(s) => {
            let (r, fit) = tokio::join!(rest, fit_on_spare(s, req, files, &pre, &post));
            r?;
            Some(fit)
        }
        None => {
            rest.await?;
            None
        }
    };
    if so_far(ctx).verdict == Verdict::Verified {
        ctx.fit = match fit {
            Some(Ok(report)) => report,
            Some(Err(e)) => {
                tracing::warn!(
                    "the spare container could not take the patch ({e}); the generalisation layers run after the tests"
                );
                fit_layers(c, req, files, &pre, &post).await
            }
            None => fit_layers(c, req, files, &pre, &post).await,
        };
    }
    Ok(())
}

/// The verdict of the runs so far, before the generalisation layers.
fn so_far(ctx: &Ctx<'_>) -> Decision {
    let req = ctx.req;
    verdict::with_second_runner(
        verdict::with_analysis(
            verdict::decide(&Inputs {
                violations: &ctx.violations,
                setup_error: None,
                fail_to_pass: &req.fail_to_pass,
                pass_to_pass: &req.pass_to_pass,
                before: &ctx.before,
                after: &ctx.after,
            }),
            &ctx.analysis.findings,
        ),
        ctx.second.as_ref(),
        &req.fail_to_pass,
    )
}

/// The generalisation layers on the spare container: the held-out files and the patch put
/// there as on the main one first. `Err`: that setup failed (the layers did not run).
async fn fit_on_spare(
    s: &dyn Sandbox,
    req: &VerifyRequest,
    files: &[super::diff::FilePatch],
    pre: &BTreeMap<String, Option<String>>,
    post: &BTreeMap<String, Option<String>>,
) -> Result<Option<FitReport>, String> {
    put_holdouts(s, req).await?;
    apply_patch(s, &req.patch).await?;
    Ok(fit_layers(s, req, files, pre, post).await)
}

/// Stop early when the unpatched runs already decide the verdict (unknown ids, no
/// reproduction): the patch is never applied.
fn baseline_decides(ctx: &Ctx<'_>) -> bool {
    let req = ctx.req;
    let pre = verdict::decide(&Inputs {
        violations: &[],
        setup_error: None,
        fail_to_pass: &req.fail_to_pass,
        pass_to_pass: &req.pass_to_pass,
        before: &ctx.before,
        after: &ctx.before,
    });
    matches!(pre.verdict, Verdict::Error | Verdict::NotReproducible)
}

/// Tests other than the fail-to-pass ones that do not pass in the patched full run but did
/// in the unpatched one: the focused plan then re-runs everything to tell regressions from
/// flakes.
fn new_failures(before: &RunRecord, after: &RunRecord, fail_to_pass: &[String]) -> bool {
    let Some(results) = after.results.as_ref() else {
        return true;
    };
    results.iter().any(|(id, case)| {
        case.outcome != crate::verify::junit::TestOutcome::Passed
            && !fail_to_pass.contains(id)
            && before.outcome(id) == crate::verify::junit::TestOutcome::Passed
    })
}

/// Rust and Node: the JUnit harness instead of hardened pytest; the rest (reproduction N/N,
/// the patch, N patched runs, workspace snapshots) as for Python.
async fn run_all_junit(c: &dyn Sandbox, ctx: &mut Ctx<'_>) -> Result<(), String> {
    let req = ctx.req;
    let kind = ctx.kind;
    ctx.command = junit_run::display_command(kind, None);
    let baseline = junit_snapshot(c, kind, &req.image.tests_dirs).await?;
    for i in 0..req.reruns.max(1) {
        let (r, runner) = one_run_junit(c, kind, Phase::Before, i, &baseline, req).await?;
        if i == 0 && runner.is_some() {
            ctx.command = junit_run::display_command(kind, runner.as_deref());
        }
        ctx.before.push(r);
    }
    if baseline_decides(ctx) {
        return Ok(());
    }
    apply_patch(c, &req.patch).await?;
    let patched = junit_snapshot(c, kind, &req.image.tests_dirs).await?;
    for i in 0..req.reruns.max(1) {
        let (r, _) = one_run_junit(c, kind, Phase::After, i, &patched, req).await?;
        ctx.after.push(r);
    }
    Ok(())
}

/// What a run must not change beyond Python's set: sources and manifests of the language
/// (cargo's `target/` is skipped; node_modules is not in the workspace).
fn junit_snapshot_input(kind: ProjectKind, tests_dirs: &[String]) -> serde_json::Value {
    let exts: &[&str] = match kind {
        ProjectKind::Rust => &[".rs", "Cargo.lock"],
        ProjectKind::Node => &[".js", ".cjs", ".mjs", ".ts", ".jsx", ".tsx", ".json"],
        ProjectKind::Go => &[".go", "go.mod", "go.sum"],
        ProjectKind::Python => &[],
    };
    serde_json::json!({
        "workspace": WORKSPACE,
        "tests_dirs": tests_dirs,
        "exts": exts,
        "prune_top": ["target"],
    })
}

async fn junit_snapshot(
    c: &dyn Sandbox,
    kind: ProjectKind,
    tests_dirs: &[String],
) -> Result<BTreeMap<String, String>, String> {
    tool(c, "snapshot", &junit_snapshot_input(kind, tests_dirs)).await
}

/// Held-out files are written into the workspace before anything runs.
async fn put_holdouts(c: &dyn Sandbox, req: &VerifyRequest) -> Result<(), String> {
    if !req.holdouts.is_empty() {
        let files: BTreeMap<&str, String> = req
            .holdouts
            .iter()
            .map(|h| (h.dest.as_str(), hex::encode(&h.contents)))
            .collect();
        let _: serde_json::Value = tool(
            c,
            "put",
            &serde_json::json!({"workspace": WORKSPACE, "files": files}),
        )
        .await?;
    }
    Ok(())
}

#[derive(Deserialize)]
struct Setup {
    ini: HarnessConfig,
    found: BTreeMap<String, bool>,
}

#[cfg(test)]
mod tests;
