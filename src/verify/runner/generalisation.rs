//! The generalisation layers (fixed or fitted) on the patched workspace: asked only of a
//! patch every integrity layer lets through, and never a setup error.

use std::collections::BTreeMap;

use super::VerifyRequest;
use crate::sandbox::{Sandbox, WORKSPACE};
use crate::verify::evidence::Layer;
use crate::verify::exec::tool;
use crate::verify::fit::{FitInput, FitReport};
use crate::verify::oracle::{self, TestSource};

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
    let asked = crate::verify::layers::LAYERS.iter().any(|l| l.asked(opts));
    if !asked && opts.given.is_empty() {
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
        tests,
        &req.fail_to_pass,
        &req.image.tests_dirs,
    );
    let run = crate::verify::layers::RunInput {
        sandbox: c,
        patch: &req.patch,
        files,
        applied: true,
        test_cmd: &req.image.test_cmd,
        review: opts.review.as_ref(),
        differential: opts.differential,
    };
    let mut report = crate::verify::layers::run(&input, opts, &run).await;
    if let Some(p) = &tests_problem {
        for l in [Layer::OracleSurface, Layer::StructuralSignals] {
            report.notes.entry(l).and_modify(|n| {
                n.push_str(&format!(" (the failing tests' files were not read: {p})"))
            });
        }
    }
    Some(report)
}
