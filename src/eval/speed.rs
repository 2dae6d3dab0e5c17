//! Where a run's time went around the model: the fault localization per episode, and each
//! fill's server time (prompt evaluated vs reused from the server's cache, generation), read
//! from the trajectories. Pure; `report` prints one row per run.

use std::fmt::Write as _;

use crate::eval::trajectory::Trajectory;

/// One run's figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Speed {
    /// Fault localization of each episode that ran one, ms.
    pub localization_ms: Vec<u64>,
    /// Model time of each fill-in-the-middle request, ms.
    pub fill_ms: Vec<u64>,
    /// Per fill the server reported: prompt evaluation and generation ms.
    pub prompt_ms: Vec<f64>,
    pub generation_ms: Vec<f64>,
    pub prompt_tokens: u64,
    pub cached_tokens: u64,
}

impl Speed {
    pub fn of<'a>(trajectories: impl IntoIterator<Item = &'a Trajectory>) -> Speed {
        let mut s = Speed::default();
        for t in trajectories {
            for (kind, v) in &t.events {
                if kind == "candidates_prompt"
                    && let Some(ms) = v.get("localization_ms").and_then(|m| m.as_u64())
                {
                    s.localization_ms.push(ms);
                }
            }
            for n in t.nodes.iter().filter(|n| n.node == "candidate") {
                if !n.origin.as_ref().is_some_and(|o| o.is_fill()) {
                    continue;
                }
                s.fill_ms.push(n.model_ms);
                if let Some(f) = &n.timings {
                    s.prompt_ms.push(f.prompt_ms);
                    s.generation_ms.push(f.generation_ms);
                    s.prompt_tokens += f.prompt_tokens;
                    s.cached_tokens += f.cached_tokens;
                }
            }
        }
        s
    }
}

/// The `q` quantile (0..=1) of `v`, nearest rank; `None` when empty. Pure.
pub fn quantile<T: Copy + PartialOrd>(v: &[T], q: f64) -> Option<T> {
    if v.is_empty() {
        return None;
    }
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let i = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
    Some(v[i])
}

fn secs(ms: Option<f64>) -> String {
    ms.map_or("—".into(), |m| format!("{:.1} s", m / 1000.0))
}

/// One row per run: localization p50 / p90 / max, fills, model time per fill p50 / p90, the
/// server's prompt and generation time per fill p50, and the share of prompt tokens its cache
/// served. Empty when no run localized or filled anything. Pure.
pub fn table(runs: &[(&str, &Speed)]) -> String {
    if runs
        .iter()
        .all(|(_, s)| s.localization_ms.is_empty() && s.fill_ms.is_empty())
    {
        return String::new();
    }
    let mut out = String::from(
        "## Speed around the model\n\n| run | localization p50 / p90 / max | fills | model time per fill p50 / p90 | prompt p50 | generation p50 | prompt tokens from cache |\n|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for (id, s) in runs {
        let loc = |q| quantile(&s.localization_ms, q).map(|m| m as f64);
        let fill = |q| quantile(&s.fill_ms, q).map(|m| m as f64);
        let cache = match s.prompt_tokens + s.cached_tokens {
            0 => "—".to_string(),
            all => format!("{:.0}%", 100.0 * s.cached_tokens as f64 / all as f64),
        };
        let _ = writeln!(
            out,
            "| `{id}` | {} / {} / {} | {} | {} / {} | {} | {} | {cache} |",
            secs(loc(0.5)),
            secs(loc(0.9)),
            secs(loc(1.0)),
            s.fill_ms.len(),
            secs(fill(0.5)),
            secs(fill(0.9)),
            secs(quantile(&s.prompt_ms, 0.5)),
            secs(quantile(&s.generation_ms, 0.5)),
        );
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::trajectory::parse;

    #[test]
    fn localization_and_fills_are_read_from_the_trajectories() {
        let t = parse(concat!(
            r#"{"kind":"candidates_prompt","localization_ms":900}"#,
            "\n",
            r#"{"kind":"node","id":"t0.candidates.c0","node":"candidate","model_ms":2000,"reply":"m.py:3 ← x","origin":{"by":"fill","shape":"line","draw":"greedy"},"timings":{"prompt_tokens":20,"cached_tokens":80,"prompt_ms":300.0,"generated_tokens":5,"generation_ms":1500.0}}"#,
            "\n",
            r#"{"kind":"node","id":"t0.candidates.c1","node":"candidate","model_ms":4000,"reply":"m.py:4 ← y","origin":{"by":"fill","shape":"line","draw":"sampled"}}"#,
            "\n",
            r#"{"kind":"node","id":"t0.candidates.c2","node":"candidate","model_ms":9000,"reply":"LINE 3: z","origin":{"by":"chat","sample":0}}"#,
            "\n",
        ));
        let s = Speed::of([&t]);
        assert_eq!(s.localization_ms, [900]);
        assert_eq!(s.fill_ms, [2000, 4000], "chat replies are not fills");
        assert_eq!((s.prompt_tokens, s.cached_tokens), (20, 80));
        let md = table(&[("r1", &s)]);
        assert!(
            md.contains(
                "| `r1` | 0.9 s / 0.9 s / 0.9 s | 2 | 2.0 s / 4.0 s | 0.3 s | 1.5 s | 80% |"
            ),
            "{md}"
        );
        assert_eq!(table(&[("r0", &Speed::default())]), "");
        assert_eq!(quantile(&[3, 1, 2], 0.5), Some(2));
    }
}
