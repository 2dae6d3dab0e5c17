//! The verification run: policy, a fresh container, N unpatched runs, the patch, N patched runs,
//! the verdict and the receipt. Every failure becomes a verdict; nothing here panics or returns
//! early without a receipt.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use bollard::Docker;
use serde::{Deserialize, Serialize};

use super::evidence::Layer;
pub use super::exec::PreparedImage;
use super::exec::{apply_patch, snapshot, tool};
use super::fit::{self, FitInput, FitReport};
use super::harness::{self, HarnessConfig};
use super::junit;
use super::junit_run;
use super::oracle::{self, TestSource};
use super::policy::{self, BaseTree, PolicyConfig, Violation};
use super::probe;
use super::receipt::{self, ImageInfo, PatchInfo, Receipt, ReceiptInputs};
use super::review::{self, ReviewModel};
use super::scan;
use super::verdict::{self, Decision, GuardStatus, Inputs, Phase, RunRecord, RunScope, Verdict};
use crate::sandbox::container::Container;
use crate::sandbox::lang::{LABEL_KIND, ProjectKind};
use crate::sandbox::output::tail_chars;
use crate::sandbox::policy::ContainerPolicy;
use crate::sandbox::{ExecRequest, ExecStatus, Sandbox, WORKSPACE};

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

/// Which generalisation layers verification runs. The default runs the pure layers and the
/// probe of behaviour beyond the tested points; the model review only when a model is given.
#[derive(Debug, Clone)]
pub struct FitOptions {
    /// Structural signals and the oracle surface (pure, ~1 ms a file).
    pub layers: bool,
    /// Behaviour beyond the tested points: two more runs of the failing tests.
    pub probe: bool,
    /// The model review (`verify.review_model`); `None`: off.
    pub review: Option<ReviewModel>,
    /// Findings the caller already made about the patch, judged like the structural
    /// signals' (the repair search's candidate that stops using a parameter or a callee of
    /// the code it replaced: it passes the tests, and a feature may be gone).
    pub given: Vec<super::evidence::Finding>,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            layers: true,
            probe: true,
            review: None,
            given: Vec::new(),
        }
    }
}

impl FitOptions {
    /// Only the integrity layers (the tamper corpora's pre-#23 behaviour, a quick check).
    pub fn off() -> Self {
        FitOptions {
            layers: false,
            probe: false,
            review: None,
            given: Vec::new(),
        }
    }
}

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
    let container = match Container::start(
        docker,
        &req.image.tag,
        &ctx.container_policy,
        &req.run_id,
        "verify",
    )
    .await
    {
        Ok(c) => c,
        Err(e) => {
            let msg = format!("starting the verification container failed: {e}");
            return ctx.finish(Some(msg));
        }
    };
    let setup_error = run_all(&container, &mut ctx, &report.new_modules, &report.files)
        .await
        .err();
    let _ = container.remove().await;
    ctx.finish(setup_error)
}

/// The container part; an `Err` is the setup error of the receipt.
async fn run_all(
    c: &dyn Sandbox,
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
    let mut full = false;
    for i in 0..req.reruns.max(1) {
        let (p, scope, t) = pick(i, full);
        let r = one_run(c, p, scope, Phase::After, i, t, &patched, req).await?;
        if i == 0 && focused {
            full = new_failures(&ctx.before[0], &r, &req.fail_to_pass);
        }
        ctx.after.push(r);
    }
    ctx.second = Some(second_run(c, &plan, req).await?);
    // Fixed or fitted: asked only of a patch every integrity layer lets through.
    let so_far = verdict::with_second_runner(
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
    );
    if so_far.verdict == Verdict::Verified {
        ctx.fit = fit_layers(c, req, files, &pre, &post).await;
    }
    Ok(())
}

/// The generalisation layers on the patched workspace (`None`: none asked for). Never fails:
/// a layer that cannot run says why in `not_run` and decides nothing.
async fn fit_layers(
    c: &dyn Sandbox,
    req: &VerifyRequest,
    files: &[super::diff::FilePatch],
    pre: &BTreeMap<String, Option<String>>,
    post: &BTreeMap<String, Option<String>>,
) -> Option<FitReport> {
    let opts = &req.fit;
    if !(opts.layers || opts.probe || opts.review.is_some() || !opts.given.is_empty()) {
        return None;
    }
    let paths = oracle::test_files(&req.fail_to_pass);
    let (tests, tests_problem) = match tool::<BTreeMap<String, Option<String>>>(
        c,
        "sources",
        &serde_json::json!({"workspace": WORKSPACE, "paths": paths}),
    )
    .await
    {
        Ok(m) => (
            m.into_iter()
                .filter_map(|(path, text)| Some(TestSource { text: text?, path }))
                .collect::<Vec<_>>(),
            None,
        ),
        Err(e) => (Vec::new(), Some(e)),
    };
    let input = FitInput::new(
        files,
        pre,
        post,
        tests.clone(),
        &req.fail_to_pass,
        &req.image.tests_dirs,
    );
    let mut report = if opts.layers {
        fit::assess(&input)
    } else {
        FitReport::default()
    };
    report.findings.extend(opts.given.iter().cloned());
    if let Some(p) = &tests_problem {
        for l in [Layer::OracleSurface, Layer::StructuralSignals] {
            report.notes.entry(l).and_modify(|n| {
                n.push_str(&format!(" (the failing tests' files were not read: {p})"))
            });
        }
    }
    if opts.probe {
        let started = Instant::now();
        let renamed: BTreeMap<String, String> = files
            .iter()
            .filter_map(|f| Some((f.new_path.clone()?, f.old_path.clone()?)))
            .collect();
        let (targets, mut notes) = probe::targets(&input.files, &renamed);
        match probe::neighbourhood(
            c,
            &req.image.test_cmd,
            &req.patch,
            true,
            &req.fail_to_pass,
            &targets,
        )
        .await
        {
            Ok((found, note)) => {
                notes.insert(0, note);
                report.merge(
                    Layer::BeyondTestedPoints,
                    notes.join("; "),
                    found,
                    started.elapsed().as_millis() as u64,
                );
            }
            Err(e) => {
                report.not_run.insert(Layer::BeyondTestedPoints, e);
            }
        }
    }
    if let Some(r) = &opts.review {
        let started = Instant::now();
        let text = oracle::test_snippets(&tests, &req.fail_to_pass, 3000);
        let (found, note) = review::review(r.0.as_ref(), &req.patch, files, &text).await;
        report.merge(
            Layer::ModelReview,
            note,
            found,
            started.elapsed().as_millis() as u64,
        );
    }
    Some(report)
}

const SECOND_MARKER: &str = "@@PATCHLOOP-SECOND@@ ";

/// The fail-to-pass tests once more, in a fresh process under the harness's own minimal
/// runner (`pl_second.py`: no pytest, no conftest, no PYTEST_* variables).
async fn second_run(
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
fn parse_second(output: &str, nonce: &str) -> verdict::SecondRun {
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

async fn one_run_junit(
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

#[derive(Deserialize)]
struct Collected {
    snapshot: BTreeMap<String, String>,
    /// pl_junit.py's result.json (Rust/Node runs) and its sha256 (`-` when missing).
    #[serde(default)]
    result: Option<String>,
    #[serde(default)]
    result_sha256: String,
    junit: Option<String>,
    guard: Option<String>,
    junit_sha256: String,
    guard_sha256: String,
}

/// The run script's last line: exit code and report fingerprints at the moment pytest returned.
#[derive(Debug, PartialEq, Eq)]
struct Marker {
    rc: i64,
    junit: String,
    guard: String,
    /// `project:7.4.4` / `harness:8.3.4` and, hex-encoded, why the project's was not used.
    pytest: String,
    why: String,
}

impl Marker {
    /// `project 7.4.4` or `harness 8.3.4: <why>`, for the run record.
    fn pytest_note(&self) -> Option<String> {
        let (source, version) = self.pytest.split_once(':')?;
        let why = hex::decode(&self.why)
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .filter(|w| !w.is_empty());
        Some(match why {
            Some(w) => format!("{source} {version}: {w}"),
            None => format!("{source} {version}"),
        })
    }
}

const MARKER: &str = "@@PATCHLOOP-RUN@@ ";

/// Exactly one marker line is expected; more means something else printed one.
fn parse_marker(output: &str) -> Result<Option<Marker>, String> {
    let lines: Vec<&str> = output
        .lines()
        .filter_map(|l| l.find(MARKER).map(|i| &l[i + MARKER.len()..]))
        .collect();
    match lines.as_slice() {
        [] => Ok(None),
        [one] => {
            let mut m = Marker {
                rc: -1,
                junit: String::new(),
                guard: String::new(),
                pytest: String::new(),
                why: String::new(),
            };
            for kv in one.split_whitespace() {
                match kv.split_once('=') {
                    Some(("rc", v)) => m.rc = v.parse().unwrap_or(-1),
                    Some(("junit", v)) => m.junit = v.to_string(),
                    Some(("guard", v)) => m.guard = v.to_string(),
                    Some(("pytest", v)) => m.pytest = v.to_string(),
                    Some(("why", v)) => m.why = v.to_string(),
                    _ => {}
                }
            }
            Ok(Some(m))
        }
        more => Err(format!(
            "{} harness end-of-run markers in the output (the code under test printed fakes)",
            more.len()
        )),
    }
}

#[derive(Deserialize)]
struct GuardReport {
    status: String,
    #[serde(default)]
    findings: Vec<String>,
    #[serde(default)]
    outcomes: BTreeMap<String, String>,
    #[serde(default)]
    conftests: BTreeMap<String, String>,
}

#[allow(clippy::too_many_arguments)]
async fn one_run(
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

const STREAM_MARKER: &str = "@@PATCHLOOP-T@@ ";
/// Output kept per test run: room for the outcome stream of large suites (~100 bytes a test).
const RUN_OUTPUT_CAP: usize = 16 << 20;

/// The outcome channel of one run: per-test records the guard wrote to the harness's private
/// stdout copy as each report happened.
#[derive(Debug, Default)]
struct Stream {
    /// Node id -> worst outcome (the guard's merge rule: a passing setup/teardown says
    /// nothing, a failing one is an error).
    outcomes: BTreeMap<String, junit::TestOutcome>,
    problems: Vec<String>,
}

fn parse_stream(output: &str, nonce: &str) -> Stream {
    use junit::TestOutcome;
    let prefix = format!("{STREAM_MARKER}{nonce} ");
    let mut s = Stream::default();
    let mut marker_seen = false;
    for line in output.lines() {
        if line.contains(MARKER) {
            marker_seen = true;
        }
        let Some(i) = line.find(&prefix) else {
            continue;
        };
        if marker_seen {
            s.problems
                .push("an outcome record arrived after the end-of-run marker".into());
            continue;
        }
        let rest = &line[i + prefix.len()..];
        let mut parts = rest.splitn(3, ' ');
        let (when, outcome, id) = (parts.next(), parts.next(), parts.next());
        let id: Option<String> = id.and_then(|j| serde_json::from_str(j).ok());
        let (Some(when), Some(outcome), Some(id)) = (when, outcome, id) else {
            s.problems.push(format!(
                "an unreadable outcome record: {}",
                tail_chars(rest, 200)
            ));
            continue;
        };
        let o = match (outcome, when) {
            ("passed", "call") => TestOutcome::Passed,
            ("passed", _) => continue,
            ("skipped", _) => TestOutcome::Skipped,
            ("failed", "call") => TestOutcome::Failed,
            ("failed", _) => TestOutcome::Error,
            _ => {
                s.problems.push(format!(
                    "an unreadable outcome record: {}",
                    tail_chars(rest, 200)
                ));
                continue;
            }
        };
        let e = s.outcomes.entry(id).or_insert(o);
        if o > *e {
            *e = o;
        }
    }
    s
}

/// Every test JUnit calls passed must have streamed `passed` and nothing worse; any streamed
/// outcome must match JUnit's.
fn stream_vs_junit(stream: &Stream, named: &BTreeMap<String, junit::CaseResult>) -> Vec<String> {
    use junit::TestOutcome;
    let mut out = Vec::new();
    for (id, case) in named {
        match stream.outcomes.get(id) {
            Some(o) if *o == case.outcome => {}
            None if case.outcome != TestOutcome::Passed => {}
            got => out.push(format!(
                "the JUnit report says {id} {} but the outcome stream says {}",
                case.outcome.as_str(),
                got.map_or("nothing", |o| o.as_str())
            )),
        }
    }
    out
}

/// Files that appeared, vanished or changed in the workspace during a run.
fn tree_changes(
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> Vec<String> {
    let mut out = Vec::new();
    let keys: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    for k in keys {
        match (before.get(k), after.get(k)) {
            (Some(a), Some(b)) if a != b => out.push(format!("the run modified {k}")),
            (None, Some(_)) => out.push(format!("the run created {k}")),
            (Some(_), None) => out.push(format!("the run deleted {k}")),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::{CappedOutput, ExecResult, SandboxError};

    /// `pl_second.py` under this machine's `python3 -I`, with `shadow` on sys.path ahead of
    /// the workspace as an installed copy of the project is (site- or dist-packages).
    fn second_here(ws: &std::path::Path, shadow: &std::path::Path, ids: &[&str]) -> String {
        use std::io::Write;
        let wrapper = format!(
            "import sys\nsys.path.insert(0, {:?})\nexec(compile({:?}, 'pl_second', 'exec'), {{'__name__': '__main__'}})\n",
            shadow.display().to_string(),
            harness::PL_SECOND
        );
        let mut child = std::process::Command::new("python3")
            .args(["-I", "-B", "-c", &wrapper])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("python3 is needed for this test");
        let input = serde_json::json!({"workspace": ws, "paths": [], "ids": ids, "nonce": "n1"});
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.to_string().as_bytes())
            .unwrap();
        String::from_utf8_lossy(&child.wait_with_output().unwrap().stdout).into_owned()
    }

    #[test]
    fn the_second_runner_imports_the_workspaces_project_not_an_installed_copy() {
        let ws = tempfile::tempdir().unwrap();
        let shadow = tempfile::tempdir().unwrap();
        for (root, version) in [(ws.path(), "workspace"), (shadow.path(), "installed")] {
            std::fs::create_dir_all(root.join("mylib")).unwrap();
            std::fs::write(
                root.join("mylib/__init__.py"),
                format!("VERSION = {version:?}\n"),
            )
            .unwrap();
        }
        std::fs::create_dir_all(ws.path().join("tests")).unwrap();
        std::fs::write(ws.path().join("tests/__init__.py"), "").unwrap();
        std::fs::write(
            ws.path().join("tests/test_v.py"),
            "import unittest\nimport mylib\n\n\ndef test_plain():\n    assert mylib.VERSION == 'workspace', mylib.VERSION\n\n\nclass T(unittest.TestCase):\n    def test_case(self):\n        self.assertEqual(mylib.VERSION, 'workspace')\n",
        )
        .unwrap();
        let out = second_here(
            ws.path(),
            shadow.path(),
            &[
                "tests/test_v.py::test_plain",
                "tests/test_v.py::T::test_case",
            ],
        );
        let run = parse_second(&out, "n1");
        assert!(run.problem.is_none(), "{out}");
        for (id, r) in &run.results {
            assert_eq!(r.outcome, "passed", "{id}: {r:?}");
        }
        assert_eq!(run.results.len(), 2, "{out}");
    }
    use async_trait::async_trait;
    use std::sync::Mutex;

    /// Answers the harness's execs from a script: (argv contains, exit code, output).
    struct Fake {
        script: Vec<(&'static str, i64, String)>,
        seen: Mutex<Vec<String>>,
    }

    #[async_trait]
    impl Sandbox for Fake {
        async fn exec(&self, req: ExecRequest) -> Result<ExecResult, SandboxError> {
            let joined = req.argv.join(" ");
            let key = if joined.contains("@@PATCHLOOP-RUN@@") {
                "pl_run".to_string()
            } else {
                req.argv.last().cloned().unwrap_or_default()
            };
            self.seen.lock().unwrap().push(key.clone());
            let (_, code, out) = self
                .script
                .iter()
                .find(|(k, _, _)| *k == key)
                .unwrap_or_else(|| panic!("unexpected exec {key}"));
            let mut o = CappedOutput::new(1 << 20);
            o.push(out.as_bytes());
            Ok(ExecResult {
                status: ExecStatus::Exited(*code),
                output: o,
                duration: Duration::from_millis(5),
            })
        }
        async fn diff(&self) -> Result<String, SandboxError> {
            Ok(String::new())
        }
        fn id(&self) -> &str {
            "fake"
        }
    }

    #[tokio::test]
    async fn a_run_without_junit_says_so_and_what_was_run() {
        let setup = serde_json::json!({
            "ini": {"ini_text": "[pytest]\n", "source": null},
            "snapshot": {},
            "found": {},
        });
        let collect = serde_json::json!({
            "junit": null, "guard": null, "junit_sha256": "-", "guard_sha256": "-", "snapshot": {},
        });
        let fake = Fake {
            script: vec![
                ("setup", 0, setup.to_string()),
                // No read-only helper in this sandbox: the baseline snapshot is an exec too.
                ("snapshot", 0, "{}".into()),
                ("pl_run", 4, "ERROR: usage: pytest [options]\n".into()),
                ("collect", 0, collect.to_string()),
            ],
            seen: Mutex::new(Vec::new()),
        };
        let image = PreparedImage {
            tag: "img".into(),
            tests_dirs: vec!["tests".into()],
            test_cmd: crate::testcmd::TestCommand::python_pytest(),
        };
        let req = VerifyRequest::new(image, String::new(), vec!["tests/t.py::test_a".into()]);
        let mut ctx = Ctx {
            req: &req,
            kind: ProjectKind::Python,
            started: Instant::now(),
            image_id: None,
            env_note: None,
            container_policy: ContainerPolicy::default(),
            patch_info: PatchInfo::new("", &[]),
            violations: Vec::new(),
            command: Vec::new(),
            before: Vec::new(),
            after: Vec::new(),
            analysis: Default::default(),
            second: None,
            fit: None,
        };
        let err = run_all(&fake, &mut ctx, &[], &[]).await.err();
        let r = ctx.finish(err);
        assert_eq!(r.decision.verdict, Verdict::Error);
        let reason = &r.decision.reason;
        assert!(reason.contains("no usable JUnit report"), "{reason}");
        assert!(reason.contains("usage: pytest"), "{reason}");
        assert!(reason.contains("[command: python3 -I -B"), "{reason}");
        // The baseline decided it: the patch was never applied.
        assert!(!fake.seen.lock().unwrap().iter().any(|k| k == "-"));
        assert!(r.runs.iter().all(|x| x.phase == Phase::Before));
    }

    #[test]
    fn only_new_failures_outside_fail_to_pass_bring_back_full_reruns() {
        use crate::verify::junit::TestOutcome;
        let rec = |outs: &[(&str, TestOutcome)]| {
            crate::verify::verdict::tests::run(Phase::After, 0, outs)
        };
        let f2p = vec!["f".to_string()];
        let before = rec(&[
            ("f", TestOutcome::Failed),
            ("p", TestOutcome::Passed),
            ("x", TestOutcome::Failed),
        ]);
        let clean = rec(&[
            ("f", TestOutcome::Passed),
            ("p", TestOutcome::Passed),
            ("x", TestOutcome::Failed),
        ]);
        assert!(
            !new_failures(&before, &clean, &f2p),
            "pre-existing failures do not count"
        );
        let f_fails = rec(&[("f", TestOutcome::Failed), ("p", TestOutcome::Passed)]);
        assert!(
            !new_failures(&before, &f_fails, &f2p),
            "fail-to-pass is re-run anyway"
        );
        let p_fails = rec(&[("f", TestOutcome::Passed), ("p", TestOutcome::Error)]);
        assert!(new_failures(&before, &p_fails, &f2p));
        let no_report = RunRecord {
            results: None,
            ..clean.clone()
        };
        assert!(new_failures(&before, &no_report, &f2p));
    }

    #[test]
    fn tree_changes_name_each_file() {
        let a = BTreeMap::from([
            ("a.py".to_string(), "1".to_string()),
            ("b.py".into(), "2".into()),
        ]);
        let b = BTreeMap::from([
            ("a.py".to_string(), "9".to_string()),
            ("c.py".into(), "3".into()),
        ]);
        assert_eq!(
            tree_changes(&a, &b),
            vec![
                "the run modified a.py",
                "the run deleted b.py",
                "the run created c.py"
            ]
        );
        assert!(tree_changes(&a, &a).is_empty());
    }

    #[test]
    fn markers_must_be_unique() {
        assert_eq!(parse_marker("no marker\n"), Ok(None));
        let one = "....\n@@PATCHLOOP-RUN@@ rc=1 junit=ab guard=cd\n";
        assert_eq!(
            parse_marker(one),
            Ok(Some(Marker {
                rc: 1,
                junit: "ab".into(),
                guard: "cd".into(),
                pytest: String::new(),
                why: String::new(),
            }))
        );
        let harness = "@@PATCHLOOP-RUN@@ rc=0 junit=a guard=b pytest=harness:8.3.4 why=626f6f6d\n";
        let m = parse_marker(harness).unwrap().unwrap();
        assert_eq!(m.pytest_note().as_deref(), Some("harness 8.3.4: boom"));
        let project = "@@PATCHLOOP-RUN@@ rc=0 junit=a guard=b pytest=project:7.2.1 why=-\n";
        let m = parse_marker(project).unwrap().unwrap();
        assert_eq!(m.pytest_note().as_deref(), Some("project 7.2.1"));
        let two = format!("@@PATCHLOOP-RUN@@ rc=0 junit=x guard=y\n{one}");
        assert!(parse_marker(&two).is_err());
    }

    #[test]
    fn outcome_stream_is_cross_checked_with_junit() {
        use crate::verify::junit::{CaseResult, TestOutcome};
        let out = "x\n@@PATCHLOOP-T@@ n1 setup passed \"t.py::a\"\n@@PATCHLOOP-T@@ n1 call passed \"t.py::a\"\n\
                   @@PATCHLOOP-T@@ n1 call failed \"t.py::b[x::y]\"\n\
                   @@PATCHLOOP-T@@ forged call passed \"t.py::b[x::y]\"\n";
        let s = parse_stream(out, "n1");
        assert!(s.problems.is_empty(), "{:?}", s.problems);
        assert_eq!(s.outcomes.get("t.py::a"), Some(&TestOutcome::Passed));
        assert_eq!(s.outcomes.get("t.py::b[x::y]"), Some(&TestOutcome::Failed));
        let case = |o| CaseResult {
            outcome: o,
            duration: None,
            message: None,
        };
        let junit = BTreeMap::from([
            ("t.py::a".to_string(), case(TestOutcome::Passed)),
            ("t.py::b[x::y]".to_string(), case(TestOutcome::Failed)),
        ]);
        assert!(stream_vs_junit(&s, &junit).is_empty());
        // A JUnit report rewritten to say passed, and a passed test never streamed.
        let forged = BTreeMap::from([
            ("t.py::b[x::y]".to_string(), case(TestOutcome::Passed)),
            ("t.py::c".to_string(), case(TestOutcome::Passed)),
        ]);
        assert_eq!(stream_vs_junit(&s, &forged).len(), 2);
        // Records after the end-of-run marker are late.
        let late =
            format!("{MARKER}rc=0 junit=- guard=-\n@@PATCHLOOP-T@@ n1 call passed \"t.py::a\"\n");
        assert_eq!(parse_stream(&late, "n1").problems.len(), 1);
    }

    #[test]
    fn second_runner_output_needs_exactly_one_nonce_line() {
        let ok = "noise\n@@PATCHLOOP-SECOND@@ k1 {\"t.py::a\": {\"outcome\": \"passed\", \"detail\": \"\"}}\n";
        let r = parse_second(ok, "k1");
        assert!(r.problem.is_none());
        assert_eq!(r.results["t.py::a"].outcome, "passed");
        assert!(parse_second(ok, "other").problem.is_some());
        let twice = format!("{ok}{ok}");
        assert!(parse_second(&twice, "k1").problem.is_some());
    }
}
