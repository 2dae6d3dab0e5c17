//! The generalisation layers (fixed or fitted) on the patched workspace: asked only of a
//! patch every integrity layer lets through, and never a setup error.

use std::collections::BTreeMap;
use std::time::Instant;

use super::VerifyRequest;
use crate::sandbox::{Sandbox, WORKSPACE};
use crate::verify::evidence::Layer;
use crate::verify::exec::tool;
use crate::verify::fit::{self, FitInput, FitReport};
use crate::verify::oracle::{self, TestSource};
use crate::verify::{probe, review};

/// The generalisation layers on the patched workspace (`None`: none asked for). Never fails:
/// a layer that cannot run says why in `not_run` and decides nothing.
pub(super) async fn fit_layers(
    c: &dyn Sandbox,
    req: &VerifyRequest,
    files: &[crate::verify::diff::FilePatch],
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
