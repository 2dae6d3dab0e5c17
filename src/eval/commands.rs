//! I/O wrappers of `patchloop report` and `patchloop replay` (the logic is pure, elsewhere).

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::eval::report::{render_markdown, summarize};
use crate::eval::results::{EpisodeResult, episodes_dir, load_run, run_dir};
use crate::eval::trajectory::{self, Trajectory};
use crate::eval::viewer::render_html;

/// What `report` wrote.
pub struct ReportOutput {
    pub markdown: String,
    pub markdown_path: PathBuf,
    pub viewer_path: PathBuf,
}

/// Summarize a run (and compare with another), write `report.md` and `viewer.html` into the
/// run's directory, and return the Markdown.
pub fn report(results_root: &Path, run_id: &str, vs: Option<&str>) -> anyhow::Result<ReportOutput> {
    let results = load_run(results_root, run_id)?;
    let summary = summarize(run_id, &results);
    let other = match vs {
        Some(v) => Some(summarize(v, &load_run(results_root, v)?)),
        None => None,
    };
    let markdown = render_markdown(&summary, other.as_ref());
    let dir = run_dir(results_root, run_id);
    let markdown_path = dir.join("report.md");
    std::fs::write(&markdown_path, &markdown)
        .with_context(|| format!("cannot write {}", markdown_path.display()))?;
    let eps = episodes_dir(results_root, run_id);
    let episodes: Vec<(EpisodeResult, Option<Trajectory>)> = results
        .into_iter()
        .map(|r| {
            let t = r
                .trajectory
                .as_ref()
                .and_then(|f| std::fs::read_to_string(eps.join(f)).ok())
                .map(|text| trajectory::parse(&text));
            (r, t)
        })
        .collect();
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
