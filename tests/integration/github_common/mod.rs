//! A stateful mock GitHub on 127.0.0.1:0 (wiremock) for the GitHub tests.
//!
//! One responder answers every route from a small in-memory state. Every request body the
//! bot sends is validated against GitHub's OpenAPI description (the subset in
//! `tests/fixtures/github/openapi/`, see its README for attribution); a body for a route the
//! subset does not describe is itself a violation. Faults can be injected per route.
#![allow(dead_code)]

pub mod demo;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use regex::Regex;
use serde_json::{Value, json};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

pub const OWNER: &str = "Codertocat";
pub const REPO: &str = "Hello-World";
pub const HEAD: &str = "ec26c3e57ca3a959ca5aad62de7213c562f8c821";

pub fn fixtures() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/github")
}

pub fn fixture(rel: &str) -> Vec<u8> {
    std::fs::read(fixtures().join(rel)).unwrap()
}

// ---------- OpenAPI request-body validation ----------

fn nullable_to_json_schema(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if m.get("nullable") == Some(&Value::Bool(true)) {
                if let Some(t) = m.get("type").cloned() {
                    m.insert("type".into(), json!([t, "null"]));
                } else if let Some(Value::Array(any)) = m.get_mut("anyOf").or(None) {
                    any.push(json!({"type": "null"}));
                }
                if let Some(Value::Array(e)) = m.get_mut("enum") {
                    e.push(Value::Null);
                }
            }
            m.remove("nullable");
            for (_, x) in m.iter_mut() {
                nullable_to_json_schema(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(nullable_to_json_schema),
        _ => {}
    }
}

pub struct Operation {
    pub method: String,
    pub route: Regex,
    pub id: String,
    pub validator: Option<jsonschema::Validator>,
}

pub fn load_operations() -> Vec<Operation> {
    let mut doc: Value = serde_json::from_slice(&fixture("openapi/openapi-subset.json")).unwrap();
    nullable_to_json_schema(&mut doc);
    let components = doc["components"].clone();
    let mut ops = Vec::new();
    let param = Regex::new(r"\\\{[a-z_]+\\\}").unwrap();
    for (path, item) in doc["paths"].as_object().unwrap() {
        let mut pat = regex::escape(path);
        for (name, rep) in [("\\{ref\\}", ".+"), ("\\{path\\}", ".+")] {
            pat = pat.replace(name, rep);
        }
        let pat = param.replace_all(&pat, "[^/]+").into_owned();
        let route = Regex::new(&format!("^{pat}$")).unwrap();
        for (method, op) in item.as_object().unwrap() {
            let Some(id) = op.get("operationId").and_then(|v| v.as_str()) else {
                continue;
            };
            let validator = op
                .pointer("/requestBody/content/application~1json/schema")
                .map(|schema| {
                    let mut root = schema.clone();
                    root.as_object_mut()
                        .unwrap()
                        .insert("components".into(), components.clone());
                    jsonschema::options()
                        .with_draft(jsonschema::Draft::Draft202012)
                        .build(&root)
                        .unwrap_or_else(|e| panic!("schema for {id}: {e}"))
                });
            ops.push(Operation {
                method: method.to_uppercase(),
                route: route.clone(),
                id: id.into(),
                validator,
            });
        }
    }
    ops
}

// ---------- state ----------

#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub query: String,
    pub body: Option<Value>,
    pub authorization: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Fault {
    pub method: &'static str,
    pub path_contains: &'static str,
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: String,
    /// Apply the request's effect anyway (the write landed, the answer was lost).
    pub apply: bool,
    pub times: usize,
    /// Answer this late (past the client's read timeout: no answer at all).
    pub delay: Option<Duration>,
}

#[derive(Debug, Clone)]
pub struct PrState {
    pub head_sha: String,
    pub head_ref: String,
    pub base_ref: String,
    /// (filename, status, patch)
    pub files: Vec<(String, String, String)>,
    /// `owner/name` of the head repository (None: this repository; else a fork).
    pub head_repo: Option<String>,
}

#[derive(Default)]
pub struct State {
    pub requests: Vec<Recorded>,
    pub violations: Vec<String>,
    pub next_id: u64,
    pub prs: BTreeMap<u64, PrState>,
    /// (id, issue, body)
    pub comments: Vec<(u64, u64, String)>,
    /// (id, pr, body)
    pub review_comments: Vec<(u64, u64, String)>,
    pub reviews: Vec<Value>,
    /// (comment id, content)
    pub reactions: Vec<(u64, String)>,
    pub permissions: BTreeMap<String, String>,
    /// run id → jobs
    pub jobs: BTreeMap<u64, Value>,
    pub logs: BTreeMap<u64, String>,
    /// path → text at HEAD
    pub contents: BTreeMap<String, String>,
    /// path → git mode at HEAD (default `100644`), for the trees built from `contents`.
    pub modes: BTreeMap<String, String>,
    pub refs: BTreeMap<String, String>,
    pub blobs: BTreeMap<String, String>,
    /// pulls created by the bot: (number, head, base, body)
    pub created_pulls: Vec<(u64, String, String, String)>,
    pub faults: Vec<Fault>,
    /// `patchloop.yml` in the org's `.github` repository.
    pub org_config: Option<String>,
    /// Where the job-log redirect points (default: this mock).
    pub log_host: Option<String>,
}

pub struct MockGitHub {
    pub server: MockServer,
    pub state: Arc<Mutex<State>>,
}

struct Responder {
    state: Arc<Mutex<State>>,
    ops: Arc<Vec<Operation>>,
}

fn j(status: u16, v: Value) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(v)
}

impl Respond for Responder {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let method = req.method.to_string();
        let path = req.url.path().to_string();
        let query = req.url.query().unwrap_or("").to_string();
        let body: Option<Value> = if req.body.is_empty() {
            None
        } else {
            serde_json::from_slice(&req.body)
                .ok()
                .or(Some(Value::String(
                    String::from_utf8_lossy(&req.body).into(),
                )))
        };
        let mut st = self.state.lock().unwrap();
        st.requests.push(Recorded {
            method: method.clone(),
            path: path.clone(),
            query: query.clone(),
            body: body.clone(),
            authorization: req
                .headers
                .get("authorization")
                .and_then(|h| h.to_str().ok())
                .map(String::from),
        });
        // Validate every body against the OpenAPI subset.
        if let Some(b) = &body {
            match self
                .ops
                .iter()
                .find(|o| o.method == method && o.route.is_match(&path))
            {
                None => st.violations.push(format!(
                    "{method} {path}: no operation in the OpenAPI subset"
                )),
                Some(op) => match &op.validator {
                    None => st.violations.push(format!(
                        "{method} {path} ({}): sends a body, none expected",
                        op.id
                    )),
                    Some(v) => {
                        for e in v.iter_errors(b) {
                            st.violations.push(format!(
                                "{method} {path} ({}): {e} at {}",
                                op.id,
                                e.instance_path()
                            ));
                        }
                    }
                },
            }
        }
        // Faults.
        let mut fault = None;
        if let Some(f) = st
            .faults
            .iter_mut()
            .find(|f| f.method == method && path.contains(f.path_contains) && f.times > 0)
        {
            f.times -= 1;
            fault = Some(f.clone());
        }
        if let Some(f) = &fault
            && !f.apply
        {
            let mut r = ResponseTemplate::new(f.status).set_body_string(f.body.clone());
            for (k, v) in &f.headers {
                r = r.insert_header(*k, v.as_str());
            }
            if let Some(d) = f.delay {
                r = r.set_delay(d);
            }
            return r;
        }
        let resp = route(&mut st, &method, &path, &query, body.as_ref());
        match fault {
            Some(f) => {
                let mut r = ResponseTemplate::new(f.status).set_body_string(f.body.clone());
                for (k, v) in &f.headers {
                    r = r.insert_header(*k, v.as_str());
                }
                if let Some(d) = f.delay {
                    r = r.set_delay(d);
                }
                r
            }
            None => resp,
        }
    }
}

fn comment_json(id: u64, body: &str) -> Value {
    json!({"id": id, "body": body, "html_url": format!("https://github.com/{OWNER}/{REPO}/pull/2#issuecomment-{id}"),
           "user": {"login": "github-actions[bot]", "type": "Bot"}})
}

fn pr_json(n: u64, p: &PrState) -> Value {
    let head_repo = p
        .head_repo
        .clone()
        .unwrap_or_else(|| format!("{OWNER}/{REPO}"));
    json!({"number": n, "state": "open", "html_url": format!("https://github.com/{OWNER}/{REPO}/pull/{n}"),
           "head": {"ref": p.head_ref, "sha": p.head_sha, "repo": {"full_name": head_repo}},
           "base": {"ref": p.base_ref, "sha": "f95f852bd8fca8fcc58a9a2d6c842781e32a215e", "repo": {"full_name": format!("{OWNER}/{REPO}")}}})
}

fn page<T: Clone>(items: &[T], query: &str) -> Vec<T> {
    let get = |k: &str| {
        query
            .split('&')
            .find_map(|kv| kv.strip_prefix(&format!("{k}=")))
            .and_then(|v| v.parse::<usize>().ok())
    };
    let per = get("per_page").unwrap_or(30);
    let p = get("page").unwrap_or(1);
    items
        .iter()
        .skip((p - 1) * per)
        .take(per)
        .cloned()
        .collect()
}

fn route(
    st: &mut State,
    method: &str,
    path: &str,
    query: &str,
    body: Option<&Value>,
) -> ResponseTemplate {
    let base = format!("/repos/{OWNER}/{REPO}");
    if path == format!("/repos/{OWNER}/.github/contents/patchloop.yml") {
        return match &st.org_config {
            Some(t) => ResponseTemplate::new(200).set_body_string(t.clone()),
            None => j(404, json!({"message": "Not Found"})),
        };
    }
    let Some(rest) = path.strip_prefix(&base) else {
        if let Some(id) = path.strip_prefix("/blob/logs/") {
            let id: u64 = id.parse().unwrap_or(0);
            return ResponseTemplate::new(200)
                .set_body_string(st.logs.get(&id).cloned().unwrap_or_default());
        }
        return j(404, json!({"message": "Not Found"}));
    };
    st.next_id += 1;
    let id = 1000 + st.next_id;
    let seg: Vec<&str> = rest.trim_start_matches('/').split('/').collect();
    match (method, seg.as_slice()) {
        ("GET", ["pulls", n]) => {
            let n: u64 = n.parse().unwrap_or(0);
            match st.prs.get(&n) {
                Some(p) => j(200, pr_json(n, p)),
                None => j(404, json!({"message": "Not Found"})),
            }
        }
        ("GET", ["pulls"]) => {
            let head = query
                .split('&')
                .find_map(|kv| kv.strip_prefix("head="))
                .map(|h| h.replace("%3A", ":").replace("%2F", "/"));
            let mut out = Vec::new();
            for (n, p) in &st.prs {
                if head.as_deref().is_none_or(|h| {
                    let owner = p
                        .head_repo
                        .as_deref()
                        .and_then(|r| r.split('/').next())
                        .unwrap_or(OWNER);
                    h == format!("{owner}:{}", p.head_ref)
                }) {
                    out.push(pr_json(*n, p));
                }
            }
            j(200, Value::Array(out))
        }
        ("GET", ["pulls", n, "files"]) => {
            let n: u64 = n.parse().unwrap_or(0);
            let files: Vec<Value> = st.prs.get(&n).map(|p| p.files.iter().map(|(f, s, patch)| json!({"sha": "x", "filename": f, "status": s, "additions": 1, "deletions": 0, "changes": 1, "blob_url": "", "raw_url": "", "contents_url": "", "patch": patch})).collect()).unwrap_or_default();
            j(200, Value::Array(page(&files, query)))
        }
        ("GET", ["issues", n, "comments"]) => {
            let n: u64 = n.parse().unwrap_or(0);
            let cs: Vec<Value> = st
                .comments
                .iter()
                .filter(|c| c.1 == n)
                .map(|c| comment_json(c.0, &c.2))
                .collect();
            j(200, Value::Array(page(&cs, query)))
        }
        ("POST", ["issues", n, "comments"]) => {
            let n: u64 = n.parse().unwrap_or(0);
            let b = body
                .and_then(|b| b["body"].as_str())
                .unwrap_or("")
                .to_string();
            st.comments.push((id, n, b.clone()));
            j(201, comment_json(id, &b))
        }
        ("PATCH", ["issues", "comments", cid]) => {
            let cid: u64 = cid.parse().unwrap_or(0);
            let b = body
                .and_then(|b| b["body"].as_str())
                .unwrap_or("")
                .to_string();
            match st.comments.iter_mut().find(|c| c.0 == cid) {
                Some(c) => {
                    c.2 = b.clone();
                    j(200, comment_json(cid, &b))
                }
                None => j(404, json!({"message": "Not Found"})),
            }
        }
        ("POST", ["issues", "comments", cid, "reactions"]) => {
            let cid: u64 = cid.parse().unwrap_or(0);
            let c = body
                .and_then(|b| b["content"].as_str())
                .unwrap_or("")
                .to_string();
            st.reactions.push((cid, c.clone()));
            j(201, json!({"id": id, "content": c}))
        }
        ("GET", ["pulls", n, "comments"]) => {
            let n: u64 = n.parse().unwrap_or(0);
            let cs: Vec<Value> = st
                .review_comments
                .iter()
                .filter(|c| c.1 == n)
                .map(|c| json!({"id": c.0, "body": c.2}))
                .collect();
            j(200, Value::Array(page(&cs, query)))
        }
        ("POST", ["pulls", n, "reviews"]) => {
            let n: u64 = n.parse().unwrap_or(0);
            let b = body.cloned().unwrap_or(Value::Null);
            // GitHub's 422s: anchors must be inside one hunk of the PR diff.
            if let Some(p) = st.prs.get(&n) {
                if b["commit_id"].as_str() != Some(&p.head_sha) {
                    return j(422, json!({"message": "commit_id is not the head"}));
                }
                for c in b["comments"].as_array().cloned().unwrap_or_default() {
                    let path = c["path"].as_str().unwrap_or("");
                    let line = c["line"].as_u64().unwrap_or(0);
                    let start = c["start_line"].as_u64().unwrap_or(line);
                    if c["side"] != "RIGHT"
                        || (c.get("start_line").is_some()
                            && (start >= line || c["start_side"] != "RIGHT"))
                    {
                        return j(
                            422,
                            json!({"message": "start line must precede the end line; suggestions need side RIGHT"}),
                        );
                    }
                    let Some((_, _, patch)) = p.files.iter().find(|f| f.0 == path) else {
                        return j(
                            422,
                            json!({"message": "Pull request review thread path is invalid"}),
                        );
                    };
                    let ok = patchloop::github::diff::parse_hunks(patch).iter().any(|h| {
                        h.new_len > 0 && h.new_start <= start && line < h.new_start + h.new_len
                    });
                    if !ok {
                        return j(
                            422,
                            json!({"message": "Pull request review thread line must be part of the diff"}),
                        );
                    }
                }
            }
            for c in b["comments"].as_array().cloned().unwrap_or_default() {
                st.next_id += 1;
                let cid = 5000 + st.next_id;
                st.review_comments
                    .push((cid, n, c["body"].as_str().unwrap_or("").into()));
            }
            st.reviews.push(b);
            j(
                200,
                json!({"id": id, "state": "COMMENTED", "html_url": "https://github.com/x"}),
            )
        }
        ("GET", ["collaborators", user, "permission"]) => match st.permissions.get(*user) {
            Some(p) => {
                let perm = match p.as_str() {
                    "maintain" => "write",
                    "triage" => "read",
                    x => x,
                };
                j(
                    200,
                    json!({"permission": perm, "role_name": p, "user": {"login": user}}),
                )
            }
            None => j(404, json!({"message": "Not Found"})),
        },
        ("GET", ["actions", "runs", run, "jobs"])
        | ("GET", ["actions", "runs", run, "attempts", _, "jobs"]) => {
            let run: u64 = run.parse().unwrap_or(0);
            j(
                200,
                st.jobs
                    .get(&run)
                    .cloned()
                    .unwrap_or(json!({"total_count": 0, "jobs": []})),
            )
        }
        ("GET", ["actions", "jobs", jid, "logs"]) => ResponseTemplate::new(302).insert_header(
            "location",
            format!(
                "{}/blob/logs/{jid}",
                st.log_host.clone().unwrap_or_default()
            )
            .as_str(),
        ),
        ("GET", ["contents", ..]) => {
            let p = seg[1..].join("/");
            match st.contents.get(&p) {
                Some(t) => ResponseTemplate::new(200).set_body_string(t.clone()),
                None => j(404, json!({"message": "Not Found"})),
            }
        }
        // Trees of HEAD, built from `contents`: the root is `tree0`, a directory `tree0:DIR`.
        ("GET", ["git", "trees", sha]) => {
            let sha = sha.replace("%3A", ":").replace("%2F", "/");
            let Some(prefix) = sha
                .strip_prefix("tree0")
                .map(|p| p.trim_start_matches(':').to_string())
            else {
                return j(404, json!({"message": "Not Found"}));
            };
            let under = if prefix.is_empty() {
                String::new()
            } else {
                format!("{prefix}/")
            };
            let mut items: BTreeMap<String, Value> = BTreeMap::new();
            for (path, text) in &st.contents {
                let Some(rest) = path.strip_prefix(&under) else {
                    continue;
                };
                let item = match rest.split_once('/') {
                    Some((dir, _)) => json!({"path": dir, "mode": "040000", "type": "tree",
                        "sha": format!("tree0:{under}{dir}")}),
                    None => json!({"path": rest,
                        "mode": st.modes.get(path).cloned().unwrap_or("100644".into()),
                        "type": "blob", "sha": format!("b{}", text.len())}),
                };
                let name = item["path"].as_str().unwrap_or("").to_string();
                items.insert(name, item);
            }
            j(
                200,
                json!({"sha": sha, "url": "", "truncated": false,
                       "tree": items.into_values().collect::<Vec<_>>()}),
            )
        }
        ("GET", ["git", "commits", sha]) => j(200, json!({"sha": sha, "tree": {"sha": "tree0"}})),
        ("POST", ["git", "blobs"]) => {
            let sha = format!("blob{id}");
            st.blobs.insert(
                sha.clone(),
                body.and_then(|b| b["content"].as_str())
                    .unwrap_or("")
                    .into(),
            );
            j(201, json!({"sha": sha, "url": ""}))
        }
        ("POST", ["git", "trees"]) => j(
            201,
            json!({"sha": format!("tree{id}"), "url": "", "tree": [], "truncated": false}),
        ),
        ("POST", ["git", "commits"]) => j(201, json!({"sha": format!("commit{id}")})),
        ("GET", ["git", "ref", "heads", rest @ ..]) => {
            let b = rest.join("/");
            match st.refs.get(&b) {
                Some(s) => j(
                    200,
                    json!({"ref": format!("refs/heads/{b}"), "object": {"sha": s, "type": "commit"}}),
                ),
                None => j(404, json!({"message": "Not Found"})),
            }
        }
        ("POST", ["git", "refs"]) => {
            let r = body
                .and_then(|b| b["ref"].as_str())
                .unwrap_or("")
                .trim_start_matches("refs/heads/")
                .to_string();
            if st.refs.contains_key(&r) {
                return j(422, json!({"message": "Reference already exists"}));
            }
            let s = body
                .and_then(|b| b["sha"].as_str())
                .unwrap_or("")
                .to_string();
            st.refs.insert(r.clone(), s.clone());
            j(
                201,
                json!({"ref": format!("refs/heads/{r}"), "object": {"sha": s}}),
            )
        }
        ("PATCH", ["git", "refs", "heads", rest @ ..]) => {
            let b = rest.join("/");
            let s = body
                .and_then(|b| b["sha"].as_str())
                .unwrap_or("")
                .to_string();
            st.refs.insert(b.clone(), s.clone());
            j(
                200,
                json!({"ref": format!("refs/heads/{b}"), "object": {"sha": s}}),
            )
        }
        ("POST", ["pulls"]) => {
            let head = body
                .and_then(|b| b["head"].as_str())
                .unwrap_or("")
                .to_string();
            let base = body
                .and_then(|b| b["base"].as_str())
                .unwrap_or("")
                .to_string();
            let text = body
                .and_then(|b| b["body"].as_str())
                .unwrap_or("")
                .to_string();
            if st.prs.values().any(|p| p.head_ref == head) {
                return j(
                    422,
                    json!({"message": "Validation Failed", "errors": [{"message": format!("A pull request already exists for {OWNER}:{head}.")}]}),
                );
            }
            let n = 100 + st.created_pulls.len() as u64;
            st.created_pulls.push((n, head.clone(), base.clone(), text));
            let sha = st.refs.get(&head).cloned().unwrap_or_default();
            let p = PrState {
                head_sha: sha,
                head_ref: head,
                base_ref: base,
                files: vec![],
                head_repo: None,
            };
            let v = pr_json(n, &p);
            st.prs.insert(n, p);
            j(201, v)
        }
        _ => j(
            404,
            json!({"message": format!("mock: no route for {method} {path}")}),
        ),
    }
}

impl MockGitHub {
    pub async fn start() -> MockGitHub {
        let server = MockServer::start().await;
        let state = Arc::new(Mutex::new(State::default()));
        let ops = Arc::new(load_operations());
        Mock::given(any())
            .respond_with(Responder {
                state: state.clone(),
                ops,
            })
            .mount(&server)
            .await;
        MockGitHub { server, state }
    }

    pub fn url(&self) -> String {
        self.server.uri()
    }

    pub fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        f(&mut self.state.lock().unwrap())
    }

    /// All OpenAPI violations so far (assert empty).
    pub fn violations(&self) -> Vec<String> {
        self.with(|s| s.violations.clone())
    }

    pub fn writes(&self) -> Vec<Recorded> {
        self.with(|s| {
            s.requests
                .iter()
                .filter(|r| r.method != "GET")
                .cloned()
                .collect()
        })
    }

    pub fn add_pr(&self, n: u64, head_sha: &str, files: Vec<(&str, &str, &str)>) {
        self.with(|s| {
            s.prs.insert(
                n,
                PrState {
                    head_sha: head_sha.into(),
                    head_ref: "changes".into(),
                    base_ref: "master".into(),
                    files: files
                        .into_iter()
                        .map(|(a, b, c)| (a.into(), b.into(), c.into()))
                        .collect(),
                    head_repo: None,
                },
            )
        });
    }
}

// ---------- clock and repairer fakes ----------

#[derive(Default)]
pub struct FakeClock {
    pub now: Mutex<u64>,
    pub sleeps: Mutex<Vec<Duration>>,
}

#[async_trait::async_trait]
impl patchloop::github::client::Clock for FakeClock {
    fn now_unix(&self) -> u64 {
        *self.now.lock().unwrap()
    }
    async fn sleep(&self, d: Duration) {
        self.sleeps.lock().unwrap().push(d);
        *self.now.lock().unwrap() += d.as_secs();
    }
}

pub fn fast_policy() -> patchloop::github::client::RetryPolicy {
    patchloop::github::client::RetryPolicy {
        mutation_gap: Duration::ZERO,
        read_timeout: Duration::from_millis(800),
        ..Default::default()
    }
}

pub struct FakeRepairer {
    pub calls: Mutex<Vec<patchloop::github::RepairRequest>>,
    pub outcome: patchloop::github::RepairOutcome,
}

impl FakeRepairer {
    pub fn new(outcome: patchloop::github::RepairOutcome) -> Arc<FakeRepairer> {
        Arc::new(FakeRepairer {
            calls: Mutex::new(Vec::new()),
            outcome,
        })
    }
    pub fn count(&self) -> usize {
        self.calls.lock().unwrap().len()
    }
}

#[async_trait::async_trait]
impl patchloop::github::Repairer for FakeRepairer {
    async fn repair(
        &self,
        req: patchloop::github::RepairRequest,
    ) -> anyhow::Result<patchloop::github::RepairOutcome> {
        self.calls.lock().unwrap().push(req);
        Ok(self.outcome.clone())
    }
}

pub fn verified(patch: &str) -> patchloop::github::RepairOutcome {
    patchloop::github::RepairOutcome {
        verdict: patchloop::github::Outcome::VERIFIED,
        patch: patch.into(),
        receipt_md: "| check | result |\n|---|---|\n| failing tests now pass | yes |".into(),
        explanation: "The subtraction used the wrong operator.".into(),
        cost_usd: 0.0123,
        tokens: 4567,
        seconds: 42.0,
        ..Default::default()
    }
}
