//! Planning an eval run (pure or filesystem-only): shards, which episodes remain (resume),
//! where each task's snapshot is, the buggy tree, parallelism, progress and predictions.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use serde::Serialize;

use crate::bench::task::Task;
use crate::eval::results::EpisodeResult;
use crate::verify::apply;

/// `--shard I/N`: the I-th (1-based) of N interleaved slices of the tasks file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("--shard {s:?} must be I/N with 1 <= I <= N, e.g. 2/4");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count): (usize, usize) = (
            i.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if count == 0 || index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    pub fn select(&self, tasks: Vec<Task>) -> Vec<Task> {
        tasks
            .into_iter()
            .enumerate()
            .filter(|(k, _)| k % self.count == self.index - 1)
            .map(|(_, t)| t)
            .collect()
    }
}

/// Episodes of `tasks` × `attempts` still to run: no result yet, or one that ended in a
/// harness error (those are retried; the model's own failures are final).
pub fn pending(tasks: &[Task], attempts: u32, episodes_dir: &Path) -> Vec<(usize, u32)> {
    let mut out = Vec::new();
    for (k, t) in tasks.iter().enumerate() {
        for a in 0..attempts {
            let f = episodes_dir.join(format!(
                "{}.json",
                EpisodeResult::file_stem(&t.instance_id, a)
            ));
            let finished = std::fs::read_to_string(&f)
                .ok()
                .and_then(|text| serde_json::from_str::<EpisodeResult>(&text).ok())
                .is_some_and(|r| r.error.is_none());
            if !finished {
                out.push((k, a));
            }
        }
    }
    out
}

/// Where a task's sources are.
#[derive(Debug, Clone, PartialEq)]
pub enum Snapshot {
    Dir(PathBuf),
    TarGz(PathBuf),
}

pub fn find_snapshot(sources: &Path, task: &Task) -> anyhow::Result<Snapshot> {
    let name = task.snapshot_name();
    let dir = sources.join(&name);
    if dir.is_dir() {
        return Ok(Snapshot::Dir(dir));
    }
    let tgz = sources.join(format!("{name}.tar.gz"));
    if tgz.is_file() {
        return Ok(Snapshot::TarGz(tgz));
    }
    bail!(
        "no snapshot for {} ({} at {}): put {name}.tar.gz or a directory {name}/ in {} (bench/fetch-sources makes the pinned ones)",
        task.instance_id,
        task.repo,
        task.base_commit,
        sources.display()
    )
}

/// Write the task's buggy tree into `dest`: the snapshot, then `bug_patch` and `test_patch`.
pub fn materialize(snapshot: &Snapshot, task: &Task, dest: &Path) -> anyhow::Result<()> {
    match snapshot {
        Snapshot::Dir(d) => {
            copy_dir(d, dest).with_context(|| format!("copying the snapshot {}", d.display()))?
        }
        Snapshot::TarGz(f) => {
            let file =
                std::fs::File::open(f).with_context(|| format!("opening {}", f.display()))?;
            let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(file));
            ar.unpack(dest)
                .with_context(|| format!("unpacking {}", f.display()))?;
        }
    }
    for (what, patch) in [
        ("bug_patch", &task.bug_patch),
        ("test_patch", &task.test_patch),
    ] {
        if patch.trim().is_empty() {
            continue;
        }
        let mut files = BTreeMap::new();
        for fp in apply::parse(patch)? {
            let p = dest.join(&fp.path);
            if let Ok(text) = std::fs::read_to_string(&p) {
                files.insert(fp.path.clone(), text);
            }
        }
        let changed = apply::apply(patch, &files)
            .with_context(|| format!("applying the {what} of {}", task.instance_id))?;
        for (path, text) in changed {
            std::fs::write(dest.join(&path), text)?;
        }
    }
    Ok(())
}

fn copy_dir(src: &Path, dest: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dest)?;
    for entry in std::fs::read_dir(src)? {
        let entry = entry?;
        let ft = entry.file_type()?;
        let to = dest.join(entry.file_name());
        if ft.is_dir() {
            copy_dir(&entry.path(), &to)?;
        } else if ft.is_file() {
            std::fs::copy(entry.path(), &to)?;
        }
    }
    Ok(())
}

/// Parallel episodes by default: one per core, at most one per 2 GiB of memory (the
/// container limit), at least one.
pub fn default_parallelism(cores: usize, mem_bytes: u64) -> usize {
    let by_mem = (mem_bytes / (2 << 30)) as usize;
    cores.min(by_mem).max(1)
}

/// Total memory from /proc/meminfo (Linux), if readable.
pub fn total_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// `[#####-----] 12/36 resolved 11 (91.7%) elapsed 1m05s ETA 2m10s`
pub fn progress_line(done: usize, total: usize, resolved: usize, elapsed: Duration) -> String {
    const WIDTH: usize = 24;
    let filled = (done * WIDTH)
        .checked_div(total)
        .unwrap_or(WIDTH)
        .min(WIDTH);
    let rate = if done == 0 {
        0.0
    } else {
        resolved as f64 * 100.0 / done as f64
    };
    let eta = if done == 0 || done >= total {
        "-".to_string()
    } else {
        fmt_dur(elapsed.mul_f64((total - done) as f64 / done as f64))
    };
    format!(
        "[{}{}] {done}/{total} resolved {resolved} ({rate:.1}%) elapsed {} ETA {eta}",
        "#".repeat(filled),
        "-".repeat(WIDTH - filled),
        fmt_dur(elapsed)
    )
}

fn fmt_dur(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// One line of SWE-bench's predictions file.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Prediction {
    pub instance_id: String,
    pub model_name_or_path: String,
    pub model_patch: String,
}

/// Predictions of a run's first attempts, in instance order.
pub fn predictions(results: &[EpisodeResult]) -> String {
    let mut out = String::new();
    for r in results.iter().filter(|r| r.attempt == 0) {
        let p = Prediction {
            instance_id: r.instance_id.clone(),
            model_name_or_path: r.model.clone(),
            model_patch: r.patch.clone(),
        };
        if let Ok(line) = serde_json::to_string(&p) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::generate::file_diff;

    fn task(id: &str) -> Task {
        serde_json::from_value(serde_json::json!({
            "instance_id": id, "repo": "o/n", "base_commit": "0123456789abcdef", "patch": "",
            "problem_statement": "", "FAIL_TO_PASS": ["t::a"], "PASS_TO_PASS": []
        }))
        .unwrap()
    }

    #[test]
    fn shards_partition_the_tasks() {
        let tasks: Vec<Task> = (0..7).map(|i| task(&format!("t{i}"))).collect();
        let mut all = Vec::new();
        for i in 1..=3 {
            let s: Shard = format!("{i}/3").parse().unwrap();
            all.extend(s.select(tasks.clone()).into_iter().map(|t| t.instance_id));
        }
        all.sort();
        assert_eq!(all.len(), 7);
        all.dedup();
        assert_eq!(all.len(), 7);
        assert_eq!(
            "1/3"
                .parse::<Shard>()
                .unwrap()
                .select(tasks)
                .iter()
                .map(|t| t.instance_id.as_str())
                .collect::<Vec<_>>(),
            vec!["t0", "t3", "t6"]
        );
        for bad in ["0/3", "4/3", "x", "1/0", "1-2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn resume_skips_finished_episodes() {
        use crate::eval::results::{tests::result, write_result};
        let dir = tempfile::tempdir().unwrap();
        let tasks = vec![task("a"), task("b")];
        write_result(dir.path(), &result("a", 0, false)).unwrap();
        let mut errored = result("b", 1, false);
        errored.error = Some("docker went away".into());
        write_result(dir.path(), &errored).unwrap();
        // a torn file (not a result) counts as not finished
        std::fs::write(dir.path().join("a__1.json"), "{").unwrap();
        assert_eq!(pending(&tasks, 2, dir.path()), vec![(0, 1), (1, 0), (1, 1)]);
    }

    #[test]
    fn snapshots_and_buggy_trees() {
        let sources = tempfile::tempdir().unwrap();
        let mut t = task("o__n-1");
        let err = find_snapshot(sources.path(), &t).unwrap_err().to_string();
        assert!(err.contains("o+n-0123456789ab.tar.gz"), "{err}");
        let snap = sources.path().join("o+n-0123456789ab");
        std::fs::create_dir_all(snap.join("pkg")).unwrap();
        std::fs::write(snap.join("pkg/m.py"), "x = 1\ny = 2\n").unwrap();
        t.bug_patch = file_diff("pkg/m.py", "x = 1\ny = 2\n", "x = 1\ny = 3\n");
        let s = find_snapshot(sources.path(), &t).unwrap();
        assert_eq!(s, Snapshot::Dir(snap.clone()));
        let dest = tempfile::tempdir().unwrap();
        materialize(&s, &t, dest.path()).unwrap();
        assert_eq!(
            std::fs::read_to_string(dest.path().join("pkg/m.py")).unwrap(),
            "x = 1\ny = 3\n"
        );
        // the snapshot itself is untouched
        assert_eq!(
            std::fs::read_to_string(snap.join("pkg/m.py")).unwrap(),
            "x = 1\ny = 2\n"
        );
        t.bug_patch = file_diff("pkg/m.py", "zzz\n", "q\n");
        let dest2 = tempfile::tempdir().unwrap();
        assert!(materialize(&s, &t, dest2.path()).is_err());
    }

    #[test]
    fn parallelism_progress_predictions() {
        assert_eq!(default_parallelism(2, 8 << 30), 2);
        assert_eq!(default_parallelism(16, 4 << 30), 2);
        assert_eq!(default_parallelism(4, 1 << 30), 1);
        let line = progress_line(12, 36, 11, Duration::from_secs(65));
        assert_eq!(
            line,
            "[########----------------] 12/36 resolved 11 (91.7%) elapsed 1m05s ETA 2m10s"
        );
        assert!(progress_line(0, 3, 0, Duration::ZERO).ends_with("ETA -"));
        let mut r = crate::eval::results::tests::result("a", 0, true);
        r.patch = "p".into();
        let mut r2 = r.clone();
        r2.attempt = 1;
        assert_eq!(
            predictions(&[r, r2]),
            "{\"instance_id\":\"a\",\"model_name_or_path\":\"oracle\",\"model_patch\":\"p\"}\n"
        );
    }
}
