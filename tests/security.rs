//! The sandbox security suite (docs/security.md classes A–G, N) against the real Docker daemon.
//!
//! Every container is created through patchloop's own code path (`Container::start`, hence
//! `ContainerPolicy::create_body`). Every negative probe has a positive control: the same probe
//! run where it must succeed (the unhardened control container, a host-side check, or the
//! same container below the limit). A probe whose control fails proves nothing, so the test
//! fails. Canary secrets are planted in this process's environment before any container exists.
//!
//! One driver test runs every section concurrently and prints exactly one summary line:
//! `sandbox: N probes, N controls ok, 0 escapes`.

mod common;

#[path = "security/lifecycle.rs"]
mod lifecycle;
#[path = "security/probes.rs"]
mod probes;
#[path = "security/sections.rs"]
mod sections;

use std::time::Instant;

use futures_util::FutureExt;
use futures_util::future::join_all;

use probes::{Ctx, Outcome};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sandbox_security_suite() {
    let started = Instant::now();
    let canaries = common::canaries();
    let docker = common::docker().await;
    let image = common::workspace_image().await;
    let ctx = Ctx::new(docker, image, canaries);

    let all = join_all(vec![
        sections::shared_pair(&ctx).boxed(),
        sections::filesystem(&ctx).boxed(),
        sections::pids(&ctx).boxed(),
        sections::memory_and_files(&ctx).boxed(),
        sections::workspace_quota(&ctx).boxed(),
        sections::helper_isolation(&ctx).boxed(),
        sections::output_flood(&ctx).boxed(),
        lifecycle::processes(&ctx).boxed(),
        lifecycle::crash_safety(&ctx).boxed(),
        lifecycle::parallel_episodes(&ctx).boxed(),
    ]);
    // A panicking section must not leave containers behind: clean up, then re-raise.
    let results: Vec<Vec<Outcome>> = match std::panic::AssertUnwindSafe(all).catch_unwind().await {
        Ok(r) => r,
        Err(panic) => {
            ctx.cleanup().await;
            std::panic::resume_unwind(panic);
        }
    };
    let mut outcomes: Vec<Outcome> = results.into_iter().flatten().collect();
    outcomes.extend(ctx.posture_outcomes().await);

    if std::env::var_os("PL_SECURITY_VERBOSE").is_some() {
        for o in &outcomes {
            eprintln!(
                "{:<5} {:<5} {}\n      probe:   {}\n      control: {}",
                if o.held { "held" } else { "ESC" },
                if o.control_ok { "ctl" } else { "CTL!" },
                o.id,
                o.detail,
                o.control_detail
            );
        }
    }
    let escapes: Vec<&Outcome> = outcomes.iter().filter(|o| !o.held).collect();
    let failed_controls: Vec<&Outcome> = outcomes.iter().filter(|o| !o.control_ok).collect();
    for o in &escapes {
        eprintln!("ESCAPE   {}: {}", o.id, o.detail);
    }
    for o in &failed_controls {
        eprintln!("CONTROL FAILED {}: {}", o.id, o.control_detail);
    }
    let controls_ok = outcomes.len() - failed_controls.len();
    eprintln!("(security suite wall time {:?})", started.elapsed());
    // Written to the real stdout, past libtest's capture: CI shows the line on success too.
    {
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(
            out,
            "sandbox: {} probes, {} controls ok, {} escapes",
            outcomes.len(),
            controls_ok,
            escapes.len()
        );
        let _ = out.flush();
    }
    // scripts/test prints this file after the whole suite (CARGO_TARGET_DIR/security-summary.txt).
    if let Some(target) = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).parent() {
        let _ = std::fs::write(
            target.join("security-summary.txt"),
            format!(
                "sandbox: {} probes, {} controls ok, {} escapes\n",
                outcomes.len(),
                controls_ok,
                escapes.len()
            ),
        );
    }
    ctx.cleanup().await;
    assert!(
        escapes.is_empty() && failed_controls.is_empty(),
        "{} escapes, {} failed controls (details above)",
        escapes.len(),
        failed_controls.len()
    );
    assert!(outcomes.len() >= 80, "only {} probes ran", outcomes.len());
}

/// Helper process for the `kill -9` probe (N1): started by `lifecycle::crash_safety` as
/// `<this test binary> --ignored --exact crash_child`, it starts an episode container and is
/// SIGKILLed mid-episode. It does nothing when run by hand without its environment.
#[test]
#[ignore = "helper process for the kill -9 probe; started by sandbox_security_suite"]
fn crash_child() {
    lifecycle::crash_child_main();
}

/// The image helper honours the sandbox layout contract (other suites rely on it).
#[tokio::test]
async fn workspace_image_follows_the_layout_contract() {
    let d = common::docker().await;
    let image = common::workspace_image().await;
    let info = d
        .inspect_image(&image)
        .await
        .expect("inspect the workspace image");
    let labels = info.config.and_then(|c| c.labels).unwrap_or_default();
    assert_eq!(
        labels.get("patchloop.tests_dirs").map(String::as_str),
        Some("[\"tests\"]")
    );
    assert!(labels.contains_key("patchloop.test_cmd"));
    assert_eq!(labels.get("patchloop.base"), Some(&common::base_image()));

    let c = common::start(
        &d,
        &image,
        &common::hardened_policy(),
        &common::run_id("layout"),
        "episode",
    )
    .await;
    let r = common::sh(
        &c,
        "stat -c '%u:%g %n' /workspace /workspace/calc/__init__.py /workspace/tests/test_calc.py; \
         git -C /workspace rev-list --all --count; \
         git --git-dir=/opt/patchloop/baseline.git rev-list --all --count; \
         git -C /workspace status --porcelain --ignored | wc -l; \
         test -f /opt/patchloop/harness/pl_guard.py && echo harness-ok",
        std::time::Duration::from_secs(20),
    )
    .await;
    let out = r.output.render();
    assert!(r.status.success(), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        &lines[..3],
        &[
            "1000:1000 /workspace",
            "1000:1000 /workspace/calc/__init__.py",
            "1000:1000 /workspace/tests/test_calc.py"
        ],
        "{out}"
    );
    assert_eq!(&lines[3..], &["1", "1", "0", "harness-ok"], "{out}");
    // The diff of an untouched workspace is empty; one edit shows up.
    use patchloop::sandbox::Sandbox;
    assert_eq!(c.diff().await.expect("diff").trim(), "");
    common::sh(
        &c,
        "echo '# edit' >> calc/__init__.py",
        std::time::Duration::from_secs(10),
    )
    .await;
    let diff = c.diff().await.expect("diff");
    assert!(
        diff.contains("+# edit") && diff.contains("calc/__init__.py"),
        "{diff}"
    );
    c.remove().await.expect("remove");
}
