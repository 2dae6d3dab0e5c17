//! The static episode viewer: one self-contained HTML file (inline CSS, no scripts, no external
//! resources) with every episode of a run: verdict, the repair's search tree (attempts per
//! strategy and tier, their candidates), steps, tool calls, observations, the diff.
//! Everything model- or repository-written is escaped: the page shows it, never runs it.

use std::fmt::Write;

use crate::eval::report::RunSummary;
use crate::eval::results::EpisodeResult;
use crate::eval::trajectory::{self, Node, Trajectory, args_line, clip_str};

const STYLE: &str = include_str!("viewer.css");
/// Observations longer than this are clipped in the page (the trajectory keeps them whole).
const MAX_OBSERVATION: usize = 20_000;

pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A status's colour: passed, failed, or neither yet (running, a duplicate, a stop reason).
fn status_class(status: &str) -> &'static str {
    match status {
        "verified" | "passing" => "st-ok",
        "" | "running" | "testing" | "submitted" | "duplicate" | "skipped" => "st-other",
        _ => "st-bad",
    }
}

fn node_html(s: &mut String, n: &Node) {
    let _ = write!(
        s,
        "<li class=\"node {kind}\" data-node=\"{id}\"><div class=\"node-head\">\
         <span class=\"status {class}\">{status}</span> <b>{kind}</b> <code>{id}</code> · tier {tier}{model}{strategy} · {tokens} tokens · {ms:.1} model-s</div>",
        kind = escape(&n.node),
        id = escape(&n.id),
        class = status_class(&n.status),
        status = escape(if n.status.is_empty() { "-" } else { &n.status }),
        tier = n.tier,
        model = if n.model.is_empty() {
            String::new()
        } else {
            format!(" · {}", escape(&n.model))
        },
        strategy = if n.strategy.is_empty() {
            String::new()
        } else {
            format!(" · {}", escape(&n.strategy))
        },
        tokens = n.tokens,
        ms = n.model_ms as f64 / 1000.0,
    );
    if !n.detail.trim().is_empty() {
        let _ = write!(
            s,
            "<p class=\"detail\">{}</p>",
            escape(&clip_str(n.detail.trim(), MAX_OBSERVATION))
        );
    }
    if !n.diff.trim().is_empty() {
        let _ = write!(
            s,
            "<details class=\"node-diff\"><summary>diff ({} lines)</summary>{}</details>",
            n.diff.lines().count(),
            diff_html(&n.diff)
        );
    }
}

/// The search tree as nested lists. `trajectory::tree` lists parents before children and a
/// child's depth is at most its predecessor's + 1, so one pass opens and closes the lists.
fn tree_html(s: &mut String, nodes: &[Node]) {
    let _ = writeln!(
        s,
        "<h3>search tree <small>({} nodes)</small></h3>",
        nodes.len()
    );
    s.push_str("<ul class=\"tree\">");
    let mut open = 1; // <ul> elements open
    for (i, (depth, n)) in trajectory::tree(nodes).into_iter().enumerate() {
        let want = depth + 1;
        if i > 0 {
            if want > open {
                s.push_str("<ul>");
                open += 1;
            } else {
                s.push_str("</li>");
                while open > want {
                    s.push_str("</ul></li>");
                    open -= 1;
                }
            }
        }
        node_html(s, n);
    }
    if !nodes.is_empty() {
        s.push_str("</li>");
    }
    while open > 1 {
        s.push_str("</ul></li>");
        open -= 1;
    }
    s.push_str("</ul>\n");
}

/// A diff with added/removed lines marked for colouring.
fn diff_html(patch: &str) -> String {
    let mut s = String::from("<pre class=\"diff\">");
    for line in patch.lines() {
        let class = if line.starts_with("+++") || line.starts_with("---") {
            "file"
        } else if line.starts_with('+') {
            "add"
        } else if line.starts_with('-') {
            "del"
        } else if line.starts_with("@@") {
            "hunk"
        } else {
            "ctx"
        };
        let _ = write!(s, "<span class=\"{class}\">{}</span>", escape(line));
    }
    s.push_str("</pre>");
    s
}

pub fn render_html(
    summary: &RunSummary,
    episodes: &[(EpisodeResult, Option<Trajectory>)],
) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\
         <title>patchloop run {id}</title><style>{STYLE}</style></head><body>\n",
        id = escape(&summary.run_id)
    );
    let p = &summary.resolved_first;
    let _ = writeln!(
        s,
        "<h1>patchloop run <code>{}</code></h1>\n<p id=\"summary\">Resolved {}/{} ({:.1}%, 95% Wilson interval {:.1}% – {:.1}%) · model {}</p>",
        escape(&summary.run_id),
        p.successes,
        p.trials,
        p.rate * 100.0,
        p.low * 100.0,
        p.high * 100.0,
        escape(&summary.models.join(", "))
    );
    s.push_str("<table id=\"episodes\"><thead><tr><th>task</th><th>attempt</th><th>verdict</th><th>stop reason</th><th>steps</th><th>time</th><th>tokens</th></tr></thead><tbody>\n");
    for (i, (r, _)) in episodes.iter().enumerate() {
        let _ = writeln!(
            s,
            "<tr class=\"{}\"><td><a href=\"#ep{i}\">{}</a></td><td>{}</td><td class=\"verdict\">{}</td><td>{}</td><td>{}</td><td>{:.1} s</td><td>{}</td></tr>",
            if r.resolved { "ok" } else { "bad" },
            escape(&r.instance_id),
            r.attempt + 1,
            escape(r.verdict.as_str()),
            escape(&r.stop_reason),
            r.steps,
            r.wall_ms as f64 / 1000.0,
            r.total_tokens
        );
    }
    s.push_str("</tbody></table>\n");
    for (i, (r, t)) in episodes.iter().enumerate() {
        episode_html(&mut s, i, r, t.as_ref());
    }
    s.push_str("</body></html>\n");
    s
}

fn episode_html(s: &mut String, i: usize, r: &EpisodeResult, t: Option<&Trajectory>) {
    let _ = writeln!(
        s,
        "<section class=\"episode {}\" id=\"ep{i}\"><h2>{} <small>attempt {}</small> <span class=\"badge\">{}</span></h2>",
        if r.resolved { "ok" } else { "bad" },
        escape(&r.instance_id),
        r.attempt + 1,
        escape(r.verdict.as_str())
    );
    let _ = writeln!(
        s,
        "<p class=\"meta\">stop reason <b>{}</b> · {} steps · {:.1} s · {} tokens · {:.1} model-s · ${:.4}</p>",
        escape(&r.stop_reason),
        r.steps,
        r.wall_ms as f64 / 1000.0,
        r.total_tokens,
        r.model_ms as f64 / 1000.0,
        r.cost_usd
    );
    if let Some(e) = &r.error {
        let _ = writeln!(s, "<p class=\"error\">harness error: {}</p>", escape(e));
    }
    match t {
        None => s.push_str("<p class=\"meta\">(no trajectory recorded)</p>\n"),
        Some(t) => {
            if !t.task.is_empty() {
                let _ = writeln!(
                    s,
                    "<details><summary>task</summary><pre>{}</pre></details>",
                    escape(&t.task)
                );
            }
            if !t.nodes.is_empty() {
                tree_html(s, &t.nodes);
            }
            for st in &t.steps {
                let _ = writeln!(
                    s,
                    "<details class=\"step\" open><summary>step {} · {} call(s) · {} tokens</summary>",
                    st.step,
                    st.calls.len(),
                    st.total_tokens
                );
                if !st.assistant_content.trim().is_empty() {
                    let _ = writeln!(
                        s,
                        "<div class=\"says\">{}</div>",
                        escape(st.assistant_content.trim())
                    );
                }
                for c in &st.calls {
                    let _ = writeln!(
                        s,
                        "<div class=\"call\"><code class=\"tool\">{}({})</code>{}<pre class=\"obs\">{}</pre></div>",
                        escape(&c.name),
                        escape(&args_line(&c.arguments, 200)),
                        c.invalid_arguments
                            .as_deref()
                            .map(|e| format!(
                                "<p class=\"error\">invalid arguments: {}</p>",
                                escape(e)
                            ))
                            .unwrap_or_default(),
                        escape(&clip_str(&c.observation, MAX_OBSERVATION))
                    );
                }
                for n in &st.notes {
                    let _ = writeln!(s, "<p class=\"note\">{}</p>", escape(n));
                }
                s.push_str("</details>\n");
            }
            if let Some(f) = &t.fin
                && !f.detail.is_empty()
            {
                let _ = writeln!(s, "<p class=\"meta\">{}</p>", escape(&f.detail));
            }
        }
    }
    if r.patch.trim().is_empty() {
        s.push_str("<p class=\"meta\">(no patch)</p>\n");
    } else {
        s.push_str("<h3>diff</h3>");
        s.push_str(&diff_html(&r.patch));
    }
    s.push_str("</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::report::summarize;
    use crate::eval::results::tests::result;
    use crate::eval::trajectory::{parse, tests::SAMPLE};

    #[test]
    fn escapes_everything_untrusted() {
        assert_eq!(
            escape("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
        let mut r = result("t<1>", 0, false);
        r.patch = "+<script>x</script>\n".into();
        let html = render_html(
            &summarize("r", std::slice::from_ref(&r)),
            &[(r, Some(parse(SAMPLE)))],
        );
        assert!(
            !html.contains("<script"),
            "an unescaped script tag reached the page"
        );
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("t&lt;1&gt;"));
        assert!(
            !html.contains("http://") && !html.contains("https://"),
            "external resource"
        );
    }

    #[test]
    fn search_tree_nests_nodes_under_their_attempt() {
        use crate::eval::trajectory::tests::TREE;
        let r = result("t1", 0, true);
        let html = render_html(
            &summarize("r", std::slice::from_ref(&r)),
            &[(r.clone(), Some(parse(TREE))), (r, Some(parse(SAMPLE)))],
        );
        assert_eq!(html.matches("search tree <small>(5 nodes)").count(), 1);
        assert_eq!(html.matches("<ul").count(), html.matches("</ul>").count());
        assert_eq!(html.matches("<li").count(), html.matches("</li>").count());
        assert_eq!(html.matches("<li").count(), 5);
        let tree = &html[html.find("<ul class=\"tree\">").unwrap()..];
        let tree = &tree[..tree.find("</ul>\n").unwrap()];
        // c1 and c2 inside t0.candidates' list item, which closes before t1.loop opens
        let pos = |needle: &str| {
            tree.find(needle)
                .unwrap_or_else(|| panic!("{needle}: {tree}"))
        };
        let attempt = pos("data-node=\"t0.candidates\"");
        let c1 = pos("data-node=\"t0.candidates.c1\"");
        let c2 = pos("data-node=\"t0.candidates.c2\"");
        let lp = pos("data-node=\"t1.loop\"");
        assert!(attempt < c1 && c1 < c2 && c2 < lp, "{tree}");
        assert_eq!(&tree[attempt..c1].matches("<ul>").count(), &1, "{tree}");
        assert_eq!(&tree[c2..lp].matches("</ul></li>").count(), &1, "{tree}");
        assert!(tree.contains("<span class=\"status st-ok\">passing</span> <b>candidate</b>"));
        assert!(tree.contains("<span class=\"status st-bad\">failing</span>"));
        assert!(tree.contains("· tier 0 · qwen-0.5b · candidates · 300 tokens · 1.2 model-s"));
        assert!(tree.contains("<summary>diff (5 lines)</summary>"), "{tree}");
        assert!(tree.contains("+&lt;b&gt;"), "the diff is escaped: {tree}");
        assert!(tree.contains("tests/test_core.py::test_clamp still fails"));
    }
}
