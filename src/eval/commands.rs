//! I/O wrappers of `patchloop report` and `patchloop replay` (the logic is pure, elsewhere).

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::eval::report::{episode_model_ms, render_markdown, summarize};
use crate::eval::results::{EpisodeResult, episodes_dir, load_run, run_dir};
use crate::eval::speed::Speed;
use crate::eval::trajectory::{self, Trajectory};
use crate::eval::viewer::render_html;

/// What `report` wrote.
pub struct ReportOutput {
    pub markdown: String,
    pub markdown_path: PathBuf,
    pub viewer_path: PathBuf,
}

/// A run's results, each with its trajectory when the file is readable, `model_ms` filled in
/// from the trajectory for results that did not record it.
fn load_episodes(
    results_root: &Path,
    run_id: &str,
) -> anyhow::Result<Vec<(EpisodeResult, Option<Trajectory>)>> {
    let eps = episodes_dir(results_root, run_id);
    Ok(load_run(results_root, run_id)?
        .into_iter()
        .map(|mut r| {
            let t = r
                .trajectory
                .as_ref()
                .and_then(|f| std::fs::read_to_string(eps.join(f)).ok())
                .map(|text| trajectory::parse(&text));
            r.model_ms = episode_model_ms(&r, t.as_ref());
            (r, t)
        })
        .collect())
}

/// Summarize a run (and compare it with other runs), write `report.md` and `viewer.html` into
/// the run's directory, and return the Markdown.
pub fn report(results_root: &Path, run_id: &str, vs: &[String]) -> anyhow::Result<ReportOutput> {
    let episodes = load_episodes(results_root, run_id)?;
    let results: Vec<EpisodeResult> = episodes.iter().map(|(r, _)| r.clone()).collect();
    let summary = summarize(run_id, &results);
    let speed_of = |eps: &[(EpisodeResult, Option<Trajectory>)]| {
        Speed::of(eps.iter().filter_map(|(_, t)| t.as_ref()))
    };
    let mut speeds = vec![(run_id.to_string(), speed_of(&episodes))];
    let others = vs
        .iter()
        .map(|v| {
            let eps = load_episodes(results_root, v)?;
            speeds.push((v.clone(), speed_of(&eps)));
            let rs: Vec<EpisodeResult> = eps.into_iter().map(|(r, _)| r).collect();
            Ok(summarize(v, &rs))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let dir = run_dir(results_root, run_id);
    let mut markdown = render_markdown(&summary, &others);
    let (receipts, missing) = crate::eval::evidence::read(&dir, &results);
    markdown.push_str(&crate::eval::evidence::render(
        &crate::eval::evidence::tally(&receipts),
        receipts.len(),
        missing,
    ));
    let rows: Vec<(&str, &Speed)> = speeds.iter().map(|(id, s)| (id.as_str(), s)).collect();
    markdown.push_str(&crate::eval::speed::table(&rows));
    let markdown_path = dir.join("report.md");
    std::fs::write(&markdown_path, &markdown)
        .with_context(|| format!("cannot write {}", markdown_path.display()))?;
    let viewer_path = dir.join("viewer.html");
    std::fs::write(&viewer_path, render_html(&summary, &episodes))
        .with_context(|| format!("cannot write {}", viewer_path.display()))?;
    Ok(ReportOutput {
        markdown,
        markdown_path,
        viewer_path,
    })
}

/// A trajectory file as terminal text.
pub fn replay(file: &Path, observation_lines: usize) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(file).with_context(|| {
        format!(
            "cannot read the trajectory {}: pass a .traj.jsonl file from results/<run-id>/episodes/",
            file.display()
        )
    })?;
    let t = trajectory::parse(&text);
    if t.steps.is_empty() && t.nodes.is_empty() && t.fin.is_none() && t.model.is_empty() {
        anyhow::bail!(
            "{} is not a patchloop trajectory (no header, step, node or final line)",
            file.display()
        );
    }
    Ok(trajectory::render_text(&t, observation_lines))
}
