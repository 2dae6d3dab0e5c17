//! The repair strategies against the real daemon, with scripted models (test doubles): the
//! candidate strategy's checkpoint (each candidate applied, checked and rolled back in one
//! container), the winner rule (verified, then the smallest diff), escalation over model tiers
//! with the workspace reset between attempts, and the spend each attempt records.

use patchloop::agent::episode::{Budgets, EpisodeConfig};
use patchloop::agent::model::Model;
use patchloop::agent::model::scripted::Scripted;
use patchloop::agent::tools::ToolConfig;
use patchloop::config::repair::Strategy;
use patchloop::pipeline::testing::DemoImage;
use patchloop::pipeline::{self, Plan};
use patchloop::sandbox::docker;
use serde_json::Value;

use crate::agent_common::jsonl;

/// The demo's correct fix, as a whole function (the docstring left out, as asked).
const RIGHT: &str = "```python\ndef median(values):\n    if not values:\n        raise ValueError(\"median() of an empty sequence\")\n    ordered = sorted(values)\n    mid = len(ordered) // 2\n    if len(ordered) % 2 == 1:\n        return ordered[mid]\n    return (ordered[mid - 1] + ordered[mid]) / 2\n```";

/// Also passes every test, with a bigger diff (the winner rule must prefer RIGHT).
const RIGHT_BUT_LONGER: &str = "```python\ndef median(values):\n    if not values:\n        raise ValueError(\"median() of an empty sequence\")\n    ordered = sorted(values)\n    n = len(ordered)\n    mid = n // 2\n    if n % 2 == 1:\n        result = ordered[mid]\n    else:\n        result = (ordered[mid - 1] + ordered[mid]) / 2\n    return result\n```";

/// Makes the even case pass and breaks the empty case (a test that passed before).
const BREAKS_ANOTHER: &str = "```python\ndef median(values):\n    ordered = sorted(values)\n    mid = len(ordered) // 2\n    if len(ordered) % 2 == 1:\n        return ordered[mid]\n    return (ordered[mid - 1] + ordered[mid]) / 2\n```";

/// Passes every test and is no median: the midrange `(min + max) / 2`, which equals the
/// median on the tested lists ([3, 1, 2], [4, 1, 3, 2], [7]) and on no list like [1, 2, 3, 10].
/// Its diff is one line: ranked by size alone, it would be chosen before RIGHT.
const MIDRANGE: &str = "```python\ndef median(values):\n    if not values:\n        raise ValueError(\"median() of an empty sequence\")\n    ordered = sorted(values)\n    mid = len(ordered) // 2\n    return (ordered[0] + ordered[-1]) / 2\n```";

const WRONG: &str =
    "```python\ndef median(values):\n    ordered = sorted(values)\n    return ordered[0]\n```";

fn scripted(yaml: &str, name: &str) -> Scripted {
    Scripted::from_yaml(yaml, name).unwrap()
}

fn candidates_yaml(replies: &[&str]) -> String {
    let mut y = String::from("turns: []\ncandidates:\n");
    for r in replies {
        y.push_str(&format!("  - {}\n", serde_json::to_string(r).unwrap()));
    }
    y
}

fn plan(out: &std::path::Path, test_cmd: &patchloop::testcmd::TestCommand, name: &str) -> Plan {
    let mut p = Plan::new(
        EpisodeConfig {
            budgets: Budgets {
                max_steps: 6,
                ..Budgets::default()
            },
            tools: ToolConfig {
                test_cmd: test_cmd.clone(),
                ..ToolConfig::default()
            },
        },
        out,
        name,
    );
    p.verify_reruns = 1;
    p
}

/// The demo image (kept while the test runs), the daemon, the image's labels, an output
/// directory and a plan for it.
async fn setup(
    name: &str,
) -> (
    DemoImage,
    bollard::Docker,
    patchloop::verify::PreparedImage,
    tempfile::TempDir,
    Plan,
) {
    let image = DemoImage::prepare(name).await.unwrap();
    let d = docker::connect().await.expect("Docker is required");
    let img = pipeline::inspect_image(&d, &image.0).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let p = plan(out.path(), &img.test_cmd, name);
    (image, d, img, out, p)
}

/// The last line of each node id.
fn nodes(traj: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for l in traj.iter().filter(|l| l["kind"] == "node") {
        match out.iter_mut().find(|n| n["id"] == l["id"]) {
            Some(n) => *n = l.clone(),
            None => out.push(l.clone()),
        }
    }
    out
}

#[tokio::test]
async fn candidates_are_checked_in_one_container_and_the_smallest_verified_wins() {
    let (_image, d, img, out, mut p) = setup("strategy-cand").await;
    p.strategies = vec![Strategy::Candidates];
    // Four candidates checked: the prose reply does not count, so five replies are drawn.
    p.candidates.count = 4;
    // Two requests in flight: replies still map to their samples in order.
    p.candidates.parallel = 2;
    let model = scripted(
        &candidates_yaml(&[
            WRONG,
            "I think the bug is in median.",
            BREAKS_ANOTHER,
            RIGHT_BUT_LONGER,
            RIGHT,
        ]),
        "candidates",
    );
    let o = pipeline::run(&d, &img, &model, &p).await.unwrap();
    assert!(o.fixed(), "{}", o.one_line());
    assert_eq!(o.strategy, Some(Strategy::Candidates));
    // The smallest passing diff won: RIGHT, not RIGHT_BUT_LONGER.
    assert!(
        o.patch.contains("+    if len(ordered) % 2 == 1:"),
        "{}",
        o.patch
    );
    assert!(!o.patch.contains("result ="), "{}", o.patch);
    // The docstring the prompt hid is still there.
    assert!(
        !o.patch.contains("-    \"\"\"Return the median"),
        "{}",
        o.patch
    );
    let r = o.receipt.as_ref().expect("verified in a fresh container");
    assert_eq!(r.decision.verdict.as_str(), "verified");
    assert_eq!(r.repair.len(), 1);
    assert_eq!(
        r.repair[0].strategy,
        patchloop::config::repair::Strategy::Candidates
    );
    assert_eq!((r.repair[0].candidates, r.repair[0].passing), (5, 2));
    assert!(r.repair[0].tokens > 0);

    let traj = jsonl(&out.path().join("trajectory.jsonl"));
    let n = nodes(&traj);
    let status = |id: &str| {
        n.iter()
            .find(|x| x["id"] == id)
            .map(|x| x["status"].as_str().unwrap().to_string())
            .unwrap_or_else(|| panic!("no node {id}: {n:?}"))
    };
    assert_eq!(status("t0.candidates"), "verified");
    assert_eq!(status("t0.candidates.c0"), "failing");
    assert_eq!(status("t0.candidates.c1"), "unparsed");
    assert_eq!(status("t0.candidates.c2"), "failing");
    let broke = n.iter().find(|x| x["id"] == "t0.candidates.c2").unwrap();
    assert!(
        broke["detail"]
            .as_str()
            .unwrap()
            .contains("test_empty_raises"),
        "{broke}"
    );
    // Only the smallest was verified: the longer passing one stays `passing`.
    assert_eq!(status("t0.candidates.c3"), "passing");
    assert_eq!(status("t0.candidates.c4"), "verified");
    // Every candidate started from the same snapshot: the failing ones' diffs hold only their
    // own edit (a leftover of an earlier candidate would show up in a later diff).
    let c2 = n.iter().find(|x| x["id"] == "t0.candidates.c2").unwrap();
    assert!(!c2["diff"].as_str().unwrap().contains("ordered[0]"), "{c2}");
    // The suspects came from the fault localization: the failing test's spectrum ranks the
    // function with the bug first.
    let asked = traj
        .iter()
        .find(|l| l["kind"] == "candidates_prompt")
        .expect("a candidates_prompt line");
    let how = asked["localization"].as_str().unwrap();
    assert!(
        how.starts_with("spectrum (") && how.contains(": 1 failing and "),
        "{how}"
    );
    assert_eq!(asked["ranked"][0]["name"], "median", "{asked}");
    // Its docstring lines never run; the lines past the empty check run in the failing test
    // and in two of the three passing ones: Ochiai 1/sqrt(3).
    assert_eq!(asked["ranked"][0]["score"], 0.577, "{asked}");
    assert_eq!(
        asked["ranked"][0]["hot"],
        serde_json::json!([5, 6, 7]),
        "{asked}"
    );
}

#[tokio::test]
async fn infill_fills_the_most_suspicious_lines_one_at_a_time_until_one_is_verified() {
    let (_image, d, img, out, mut p) = setup("strategy-infill").await;
    p.strategies = vec![Strategy::Candidates];
    p.candidates.format = patchloop::config::repair::EditFormat::Infill;
    // K bounds the chat formats' replies, not the fills: one checked candidate does not end
    // the drawing; the first passing infill does (all are one-line edits).
    p.candidates.count = 1;
    // The sites, best first: lines 5, 6 and 7 of stats/median.py (Ochiai ties, in line
    // order). The first is filled in wrong (checked, failing), the second as it is (no
    // candidate); the third is the fix.
    let model = scripted(
        "turns: []\ninfills:\n  - \"    ordered = sorted(values, reverse=True)\"\n  - \"    mid = len(ordered) // 2\"\n  - \"    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2\"\n",
        "infill",
    );
    let o = pipeline::run(&d, &img, &model, &p).await.unwrap();
    assert!(o.fixed(), "{}", o.one_line());
    assert!(
        o.patch
            .contains("+    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2"),
        "{}",
        o.patch
    );
    let traj = jsonl(&out.path().join("trajectory.jsonl"));
    let asked = traj
        .iter()
        .find(|l| l["kind"] == "candidates_prompt")
        .unwrap();
    assert_eq!(asked["format"], "infill", "{asked}");
    let n = nodes(&traj);
    let cands: Vec<(&str, &str)> = n
        .iter()
        .filter(|x| x["node"] == "candidate")
        .map(|x| (x["reply"].as_str().unwrap(), x["status"].as_str().unwrap()))
        .collect();
    assert_eq!(cands.len(), 3, "{cands:?}");
    assert!(cands[0].0.starts_with("stats/median.py:5 ← "), "{cands:?}");
    assert_eq!(cands[0].1, "failing");
    assert_eq!(cands[1].1, "not_applied");
    assert!(cands[2].0.starts_with("stats/median.py:7 ← "), "{cands:?}");
    assert_eq!(cands[2].1, "verified");
}

#[tokio::test]
async fn infill_draws_until_k_pass_and_the_most_faithful_passing_fill_is_verified() {
    let (_image, d, img, out, mut p) = setup("strategy-faithful").await;
    p.strategies = vec![Strategy::Candidates];
    p.candidates.format = patchloop::config::repair::EditFormat::Infill;
    p.candidates.count = 2;
    // Greedy over lines 5, 6, 7 and 3 (the guard every test runs, ranked last), then the
    // same four sampled twice each, back to back. Line 7's two samples pass: the first
    // rewrites the line around `values` (far from the code it replaces), the second keeps
    // it; the first passing fill no longer ends the drawing, and the faithful one wins.
    let long = "    return sorted(values)[len(values) // 2] if len(values) % 2 else (sorted(values)[len(values) // 2 - 1] + sorted(values)[len(values) // 2]) / 2";
    let short =
        "    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2";
    let model = scripted(
        &format!(
            "turns: []\ninfills:\n  - \"    ordered = sorted(values, reverse=True)\"\n  - \"    mid = len(ordered) // 2\"\n  - \"    return ordered[mid]\"\n  - \"    if not values:\"\n  - \"    ordered = sorted(values)\"\n  - \"    ordered = sorted(values)\"\n  - \"    mid = len(ordered) // 2\"\n  - \"    mid = len(ordered) // 2\"\n  - \"{long}\"\n  - \"{short}\"\n"
        ),
        "faithful",
    );
    let o = pipeline::run(&d, &img, &model, &p).await.unwrap();
    let traj = jsonl(&out.path().join("trajectory.jsonl"));
    let n = nodes(&traj);
    let cands: Vec<(&str, &str)> = n
        .iter()
        .filter(|x| x["node"] == "candidate")
        .map(|x| (x["id"].as_str().unwrap(), x["status"].as_str().unwrap()))
        .collect();
    assert!(o.fixed(), "{}", o.one_line());
    assert!(
        o.patch.contains(&format!("+{short}")),
        "{cands:?} {}",
        o.patch
    );
    // Ten fills drawn (two passing, then K is reached); only the faithful one went to the
    // verifier.
    let drawn: std::collections::BTreeSet<&str> = cands.iter().map(|c| c.0).collect();
    assert_eq!(drawn.len(), 10, "{cands:?}");
    assert!(
        cands.contains(&("t0.candidates.c8", "passing")),
        "{cands:?}"
    );
    assert!(
        cands.contains(&("t0.candidates.c9", "verified")),
        "{cands:?}"
    );
    let a = &o.attempts[0];
    assert_eq!((a.candidates, a.passing), (10, 2));
}

#[tokio::test]
async fn unconfigured_strategies_are_routed_by_model_size_and_the_receipt_says_why() {
    let (_image, d, img, _out, mut p) = setup("strategy-routed").await;
    p.routed = true;
    // A small model by its name: the anytime search's stages. Its chat replies fail and no
    // loop turn is scripted (the loop ends on the exhausted script); the fill stages decline.
    let tiny = scripted(&candidates_yaml(&[WRONG, WRONG]), "tiny-0.5b");
    let big = scripted(&candidates_yaml(&[]), "big-14b");
    let tiers: [&dyn Model; 2] = [&tiny, &big];
    p.candidates.count = 2;
    p.candidates.format = patchloop::config::repair::EditFormat::Function;
    let o = pipeline::run_tiers(&d, &img, &tiers, &p).await.unwrap();
    let tried: Vec<(usize, &str, &str)> = o
        .attempts
        .iter()
        .map(|a| (a.tier, a.strategy.as_str(), a.why.as_str()))
        .collect();
    let small = "a small model (0.5B): the anytime search";
    assert_eq!(
        tried,
        [
            (0, "candidates", small),
            (0, "loop", small),
            (
                1,
                "loop",
                "an escalated tier (1): the loop with the ranked context"
            ),
        ],
        "{}",
        o.one_line()
    );
    // The candidates had a share (a later stage was to run); the tier's last stage had the rest.
    assert!(o.attempts[0].share_ms.is_some(), "{:?}", o.attempts[0]);
    assert!(o.attempts[1].share_ms.is_none(), "{:?}", o.attempts[1]);
    assert_eq!(o.attempts[0].stop, "no_candidate");
    // The stages it skipped, and why, are in the receipt.
    let search = &o.search;
    let skipped: Vec<(usize, &str, &str)> = search
        .skipped
        .iter()
        .map(|k| (k.tier, k.strategy.as_str(), k.why.as_str()))
        .collect();
    let why = "it draws fills, and the edit format is function";
    assert_eq!(skipped, [(0, "shapes", why), (0, "sampled", why)]);
    assert!(
        search.ended.starts_with("every stage ran (loop)"),
        "{search:?}"
    );
    assert!(
        o.one_line().contains("stages candidates → loop → loop ran"),
        "{}",
        o.one_line()
    );
}

#[tokio::test]
async fn escalation_resets_the_workspace_and_the_next_tier_wins() {
    let (_image, d, img, out, mut p) = setup("strategy-esc").await;
    p.strategies = vec![Strategy::Candidates, Strategy::Loop];
    p.candidates.count = 2;
    // Tier 0: two failing candidates, then a loop that leaves a wrong edit and a new file.
    let small = scripted(
        &format!(
            "{}turns:\n  - tool_calls:\n      - name: diff\n        arguments: {{}}\n  - tool_calls:\n      - name: bash\n        arguments: {{command: \"echo junk > stats/notes.txt && sed -i 's/ordered\\\\[mid\\\\]$/ordered[0]/' stats/median.py\"}}\n  - tool_calls:\n      - name: submit\n        arguments: {{}}\n",
            candidates_yaml(&[WRONG, BREAKS_ANOTHER]).replace("turns: []\n", "")
        ),
        "small",
    );
    let big = scripted(&candidates_yaml(&[RIGHT]), "big");
    let tiers: [&dyn Model; 2] = [&small, &big];
    let o = pipeline::run_tiers(&d, &img, &tiers, &p).await.unwrap();
    assert!(o.fixed(), "{}", o.one_line());
    assert!(o.model.starts_with("scripted:big"), "{}", o.model);
    let tried: Vec<(usize, &str, &str)> = o
        .attempts
        .iter()
        .map(|a| (a.tier, a.strategy.as_str(), a.result.as_str()))
        .collect();
    assert_eq!(
        tried,
        [
            (0, "candidates", "not_passing"),
            (0, "loop", "failing"),
            (1, "candidates", "verified")
        ]
    );
    // The loop's leftovers are gone: the winning patch is the candidate's edit alone.
    assert!(!o.patch.contains("notes.txt"), "{}", o.patch);
    assert!(!o.patch.contains("ordered[0]"), "{}", o.patch);
    assert!(o.patch.contains("(ordered[mid - 1] + ordered[mid]) / 2"));
    assert_eq!(o.receipt.as_ref().unwrap().repair.len(), 3);
    // The candidates rolled back before the loop began: its first look at the diff is empty.
    let traj = jsonl(&out.path().join("trajectory.jsonl"));
    let first_step = traj.iter().find(|l| l["kind"] == "step").unwrap();
    let obs = first_step["calls"][0]["observation"].as_str().unwrap();
    assert!(
        !obs.contains("median.py"),
        "the loop saw a candidate's leftovers: {obs}"
    );
}

/// A task whose failing test is held out (it exists only in the verifier's container): the
/// candidates cannot run it, so they are checked on the visible suite and the verifier judges
/// the target.
#[tokio::test]
async fn hidden_targets_are_left_to_the_verifier() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("strategy-hidden");
    patchloop::agent::demo::write_repo(&repo).unwrap();
    // The visible tests pass before the fix; the failing one is the holdout.
    let visible = std::fs::read_to_string(repo.join("tests/test_median.py"))
        .unwrap()
        .replace(
            "def test_even_length_averages_the_middle_pair():\n    assert median([4, 1, 3, 2]) == 2.5\n",
            "",
        );
    std::fs::write(repo.join("tests/test_median.py"), visible).unwrap();
    let hidden = "from stats import median\n\n\ndef test_even_hidden():\n    assert median([4, 1, 3, 2]) == 2.5\n";
    let d = docker::connect().await.expect("Docker is required");
    let prepared = patchloop::sandbox::prepare::prepare(
        &d,
        &patchloop::sandbox::prepare::PrepareOptions {
            path: repo.clone(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let _cleanup = DemoImage(prepared.tag.clone());
    let img = pipeline::inspect_image(&d, &prepared.tag).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut p = plan(out.path(), &img.test_cmd, "strategy-hidden");
    p.strategies = vec![Strategy::Candidates];
    p.candidates.count = 2;
    p.statement = Some("median() of an even-length list must average the middle pair".into());
    p.targets = pipeline::TargetSpec::Given {
        fail_to_pass: vec!["tests/test_hidden.py::test_even_hidden".into()],
        pass_to_pass: Vec::new(),
        holdouts: vec![patchloop::verify::Holdout {
            dest: "tests/test_hidden.py".into(),
            contents: hidden.as_bytes().to_vec(),
        }],
    };
    // No traceback exists in the sandbox: the statement's `median()` locates the function.
    let model = scripted(&candidates_yaml(&[WRONG, RIGHT]), "hidden");
    let o = pipeline::run(&d, &img, &model, &p).await.unwrap();
    let traj = jsonl(&out.path().join("trajectory.jsonl"));
    let n = nodes(&traj);
    assert!(o.fixed(), "{} {n:?}", o.one_line());
    let r = o.receipt.as_ref().unwrap();
    assert_eq!(r.decision.verdict.as_str(), "verified");
    assert!(
        r.holdout_files.iter().any(|h| h.contains("test_hidden.py")),
        "{:?}",
        r.holdout_files
    );
    let c1 = n.iter().find(|x| x["id"] == "t0.candidates.c1").unwrap();
    assert_eq!(c1["status"], "verified", "{c1}");
}

/// Issue #42: a candidates run with the verifier's model review on, against a server that
/// answers both: every request it received is a call the repair's ledger booked (the
/// candidates' chat samples and the review alike), and the receipt says how many.
#[tokio::test]
async fn every_request_of_candidates_and_review_is_booked_by_the_ledger() {
    use wiremock::matchers::{body_string_contains, method};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let reply = |content: &str| {
        ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "id": "x", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 10, "total_tokens": 40}}))
    };
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(body_string_contains("You review a patch"))
        .respond_with(reply("VERDICT: fixed\nCLASS: none\nLINE: none"))
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(reply(RIGHT))
        .with_priority(2)
        .mount(&server)
        .await;
    let opts = patchloop::agent::model::ModelOptions::default();
    let model =
        patchloop::agent::model::openai::OpenAi::new(&server.uri(), "m", opts.clone()).unwrap();
    let reviewer = patchloop::agent::model::openai::OpenAi::new(&server.uri(), "r", opts).unwrap();
    let (_image, d, img, out, mut p) = setup("strategy-ledger").await;
    p.strategies = vec![Strategy::Candidates];
    p.candidates.count = 1;
    p.review = Some(patchloop::pipeline::review::ReviewSpec(
        std::sync::Arc::new(reviewer),
    ));
    let o = pipeline::run(&d, &img, &model, &p).await.unwrap();
    assert!(o.fixed(), "{}", o.one_line());
    let requests = server.received_requests().await.unwrap();
    let reviews = requests
        .iter()
        .filter(|r| String::from_utf8_lossy(&r.body).contains("You review a patch"))
        .count();
    assert!(reviews >= 1, "the review never asked the server");
    let spend = o.receipt.as_ref().unwrap().spend.clone().unwrap();
    assert_eq!(spend.calls, requests.len(), "{spend:?}");
    assert_eq!(spend.tokens, 40 * requests.len() as u64);
    assert_eq!(o.spent.calls, requests.len());
    drop(out);
}

/// The missing even-length case as new lines before `return ordered[mid]`: only an `insert`
/// site there makes it pass (a block or body filled with it loses the odd case's return).
const INSERTED: &str =
    "    if len(ordered) % 2 == 0:\n        return (ordered[mid - 1] + ordered[mid]) / 2\n";

fn every_fill(text: &str, n: usize) -> String {
    let mut y = String::from("turns: []\ninfills:\n");
    for _ in 0..n {
        y.push_str(&format!("  - {}\n", serde_json::to_string(text).unwrap()));
    }
    y
}

/// The later stages of the anytime search alone, against the real daemon: `shapes` fills
/// multi-line sites (the fix is an insert), `sampled` draws the line, block and insert sites
/// at the temperature only; each stage's candidates hang under its own attempt node.
#[tokio::test]
async fn the_shapes_and_sampled_stages_fill_multi_line_sites_and_say_so() {
    let (_image, d, img, out, mut p) = setup("strategy-stages").await;
    p.candidates.format = patchloop::config::repair::EditFormat::Infill;
    p.strategies = vec![Strategy::Shapes, Strategy::Sampled];
    let model = scripted(&every_fill(INSERTED, 80), "stages");
    let o = pipeline::run(&d, &img, &model, &p).await.unwrap();
    assert!(o.fixed(), "{}", o.one_line());
    assert!(
        o.patch.contains("+    if len(ordered) % 2 == 0:"),
        "{}",
        o.patch
    );
    let tried: Vec<(&str, &str)> = o
        .attempts
        .iter()
        .map(|a| (a.strategy.as_str(), a.result.as_str()))
        .collect();
    assert_eq!(
        tried,
        [("shapes", "verified")],
        "verified: sampled never ran"
    );
    assert_eq!(o.search.ended, "verified");
    let traj = jsonl(&out.path().join("trajectory.jsonl"));
    let n = nodes(&traj);
    let shapes: Vec<&str> = n
        .iter()
        .filter(|x| x["node"] == "candidate")
        .map(|x| x["origin"]["shape"].as_str().unwrap())
        .collect();
    assert!(shapes.iter().all(|s| *s != "line"), "{shapes:?}");
    assert_eq!(shapes.last(), Some(&"insert"), "{shapes:?}");

    // `sampled` alone: every draw sampled, the first one at the insert site's the fix.
    let out2 = tempfile::tempdir().unwrap();
    let mut p2 = plan(out2.path(), &img.test_cmd, "strategy-stages-sampled");
    p2.candidates.format = patchloop::config::repair::EditFormat::Infill;
    p2.strategies = vec![Strategy::Sampled];
    let model = scripted(&every_fill(INSERTED, 200), "sampled");
    let o = pipeline::run(&d, &img, &model, &p2).await.unwrap();
    assert!(o.fixed(), "{}", o.one_line());
    let traj = jsonl(&out2.path().join("trajectory.jsonl"));
    let n = nodes(&traj);
    let cands: Vec<&Value> = n.iter().filter(|x| x["node"] == "candidate").collect();
    assert!(!cands.is_empty());
    for c in &cands {
        assert!(c["id"].as_str().unwrap().starts_with("t0.sampled.c"), "{c}");
        assert_eq!(c["origin"]["draw"], "sampled", "{c}");
    }
    assert!(
        cands
            .iter()
            .any(|c| c["origin"]["shape"] == "insert" && c["status"] == "verified"),
        "{cands:?}"
    );
}

/// Consensus among passing candidates, end to end in the search: three pass the tests, the
/// two medians outvote the midrange (the smallest diff), and the verified winner's receipt
/// carries the comparison; with only the midrange and one median there is no majority, and
/// neither is posted as `verified`.
#[tokio::test]
async fn passing_candidates_are_compared_and_the_outvoted_one_is_not_chosen() {
    let (_image, d, img, out, mut p) = setup("strategy-consensus").await;
    p.strategies = vec![Strategy::Candidates];
    p.candidates.count = 3;
    let model = scripted(
        &candidates_yaml(&[MIDRANGE, RIGHT, RIGHT_BUT_LONGER]),
        "candidates",
    );
    let o = pipeline::run(&d, &img, &model, &p).await.unwrap();
    assert!(o.fixed(), "{}", o.one_line());
    assert!(
        o.patch.contains("+    if len(ordered) % 2 == 1:") && !o.patch.contains("result ="),
        "{}",
        o.patch
    );
    let r = o.receipt.as_ref().unwrap();
    assert_eq!((r.repair[0].candidates, r.repair[0].passing), (3, 3));
    let row = r.layers.iter().find(|l| l.layer == "consensus").unwrap();
    assert_eq!(row.status, "clean", "{row:?}");
    assert!(
        row.detail.starts_with(
            "3 passing candidate(s) compared in the repair search on 1 changed function(s)"
        ),
        "{row:?}"
    );
    // Only the winner was verified: the midrange was outvoted and never went first.
    let n = nodes(&jsonl(&out.path().join("trajectory.jsonl")));
    let status = |id: &str| {
        n.iter()
            .find(|x| x["id"] == id)
            .map(|x| x["status"].as_str().unwrap().to_string())
            .unwrap_or_else(|| panic!("no node {id}: {n:?}"))
    };
    assert_eq!(status("t0.candidates.c0"), "passing");
    assert_eq!(status("t0.candidates.c1"), "verified");

    // Two that disagree: each is `needs_review` with the input they disagree on.
    let out2 = tempfile::tempdir().unwrap();
    let mut p2 = plan(out2.path(), &img.test_cmd, "strategy-consensus-split");
    p2.strategies = vec![Strategy::Candidates];
    p2.candidates.count = 2;
    let model = scripted(&candidates_yaml(&[MIDRANGE, RIGHT]), "candidates");
    let o = pipeline::run(&d, &img, &model, &p2).await.unwrap();
    assert!(!o.fixed(), "{}", o.one_line());
    let r = o.receipt.as_ref().unwrap();
    assert_eq!(r.decision.verdict.as_str(), "needs_review");
    assert!(
        r.decision.reason.contains("no_majority (consensus)"),
        "{}",
        r.decision.reason
    );
    let f = r.fit.as_ref().unwrap();
    let split: Vec<_> = f
        .findings
        .iter()
        .filter(|x| x.kind == "no_majority")
        .collect();
    assert_eq!(split.len(), 1, "{f:?}");
    // The input shown: the two candidates answer it differently, checked in Python.
    let call = split[0].input.clone().unwrap();
    let check = std::process::Command::new("python3")
        .arg("-c")
        .arg(format!(
            "import statistics\n\
             def median(v):\n    return statistics.median(v)\na = {call}\n\
             def median(v):\n    s = sorted(v)\n    return (s[0] + s[-1]) / 2\nb = {call}\n\
             assert a != b, (a, b)\n"
        ))
        .status()
        .unwrap();
    assert!(check.success(), "the candidates agree on {call}");
}
