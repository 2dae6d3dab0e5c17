//! Model adapters against mock servers speaking the real Ollama `/api/chat` and
//! `/api/generate` and OpenAI `/v1/chat/completions` and `/v1/completions` wire formats. Assertions are on what the adapter SENT.

use std::sync::Arc;
use std::time::Duration;

use patchloop::agent::model::ollama::Ollama;
use patchloop::agent::model::openai::OpenAi;
use patchloop::agent::model::retry::test_clock::FakeClock;
use patchloop::agent::model::{
    AssistantMessage, FinishReason, Infill, Message, Model, ModelError, ModelOptions, Request,
    Sampling, ToolChoice, ToolSpec,
};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "view_file".into(),
        description: "Show a file".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    }]
}

fn opts() -> ModelOptions {
    ModelOptions {
        num_ctx: Some(4096),
        think: Some(false),
        keep_alive: Some("5m".into()),
        request_timeout: Duration::from_secs(10),
        ..ModelOptions::default()
    }
}

async fn sent_bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

/// A real `/api/chat` non-streaming response with a tool call (shape from Ollama's docs/api.md).
fn ollama_tool_response() -> Value {
    json!({
        "model": "qwen2.5-coder:1.5b",
        "created_at": "2025-07-07T20:22:19.184789Z",
        "message": {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "view_file", "arguments": {"path": "stats/median.py"}}}]
        },
        "done_reason": "stop",
        "done": true,
        "total_duration": 1_000_000,
        "load_duration": 1000,
        "prompt_eval_count": 120,
        "prompt_eval_duration": 1000,
        "eval_count": 17,
        "eval_duration": 1000
    })
}

#[tokio::test]
async fn ollama_sends_native_chat_with_tools_and_replays_history() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .respond_with(ResponseTemplate::new(200).set_body_json(ollama_tool_response()))
        .mount(&server)
        .await;
    let model = Ollama::new(&server.uri(), "qwen2.5-coder:1.5b", opts()).unwrap();
    let mut history = vec![Message::system("sys"), Message::user("fix it")];
    let tools = tools();
    let r = model
        .complete(&Request {
            messages: &history,
            tools: &tools,
            sample: None,
        })
        .await
        .unwrap();
    assert_eq!(r.usage.prompt_tokens, 120);
    assert_eq!(r.usage.completion_tokens, 17);
    assert_eq!(r.finish, FinishReason::ToolCalls);
    let call = r.message.tool_calls[0].clone();
    assert_eq!(call.name, "view_file");
    assert_eq!(call.arguments, json!({"path": "stats/median.py"}));
    history.push(Message::Assistant(r.message.clone()));
    history.push(Message::tool_result(&call, "1  def median(xs):"));
    model
        .complete(&Request {
            messages: &history,
            tools: &tools,
            sample: None,
        })
        .await
        .unwrap();

    let bodies = sent_bodies(&server).await;
    assert_eq!(bodies.len(), 2);
    let first = &bodies[0];
    assert_eq!(first["model"], "qwen2.5-coder:1.5b");
    assert_eq!(first["stream"], false);
    assert_eq!(first["think"], false);
    assert_eq!(first["keep_alive"], "5m");
    assert_eq!(first["options"]["num_ctx"], 4096);
    assert_eq!(first["tools"][0]["type"], "function");
    assert_eq!(first["tools"][0]["function"]["name"], "view_file");
    assert_eq!(
        first["tools"][0]["function"]["parameters"]["required"][0],
        "path"
    );
    let second = bodies[1]["messages"].as_array().unwrap();
    // Append-only: the first request's messages are a prefix of the second's.
    assert_eq!(
        &second[..2],
        first["messages"].as_array().unwrap().as_slice()
    );
    // The assistant message is replayed exactly as Ollama sent it.
    assert_eq!(second[2], ollama_tool_response()["message"]);
    assert_eq!(
        second[3],
        json!({"role": "tool", "content": "1  def median(xs):", "tool_name": "view_file"})
    );
}

#[tokio::test]
async fn ollama_model_not_found_says_how_to_pull() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .respond_with(
            ResponseTemplate::new(404).set_body_json(
                json!({"error": "model \"nope:7b\" not found, try pulling it first"}),
            ),
        )
        .expect(1)
        .mount(&server)
        .await;
    let model = Ollama::new(&server.uri(), "nope:7b", opts()).unwrap();
    let err = model
        .complete(&Request {
            messages: &[Message::user("x")],
            tools: &[],
            sample: None,
        })
        .await
        .unwrap_err();
    assert!(matches!(err, ModelError::ModelNotFound { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("ollama pull nope:7b"), "{msg}");
}

#[tokio::test]
async fn ollama_unreachable_names_the_url_and_how_to_start_it() {
    // Bind then drop a listener: nothing answers on that port.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let clock = Arc::new(FakeClock::new(1.0));
    let model = Ollama::new(&url, "qwen2.5-coder:1.5b", opts())
        .unwrap()
        .with_clock(clock.clone());
    let err = model
        .complete(&Request {
            messages: &[Message::user("x")],
            tools: &[],
            sample: None,
        })
        .await
        .unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains(&url), "{msg}");
    assert!(
        msg.contains("ollama serve") && msg.contains("ollama pull qwen2.5-coder:1.5b"),
        "{msg}"
    );
    assert_eq!(
        clock.sleeps().len(),
        4,
        "connection errors are retried up to the attempt bound"
    );
}

fn openai_tool_response() -> Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "qwen2.5-coder-0.5b",
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": null,
                "tool_calls": [{
                    "id": "call_abc",
                    "type": "function",
                    "function": {"name": "view_file", "arguments": "{\"path\": \"stats/median.py\"}"}
                }]
            },
            "finish_reason": "tool_calls"
        }],
        "usage": {"prompt_tokens": 200, "completion_tokens": 20, "total_tokens": 220}
    })
}

fn openai_text(content: &str) -> Value {
    json!({
        "id": "chatcmpl-2", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    })
}

#[tokio::test]
async fn openai_sends_tools_tool_choice_and_tool_results_by_id() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(openai_tool_response()))
        .mount(&server)
        .await;
    let o = ModelOptions {
        tool_choice: ToolChoice::Required,
        api_key: Some("sk-test".into()),
        ..opts()
    };
    let model = OpenAi::new(&format!("{}/v1", server.uri()), "qwen2.5-coder-0.5b", o).unwrap();
    let tools = tools();
    let mut history = vec![Message::system("sys"), Message::user("fix")];
    let r = model
        .complete(&Request {
            messages: &history,
            tools: &tools,
            sample: None,
        })
        .await
        .unwrap();
    assert_eq!(r.usage.total(), 220);
    let call = r.message.tool_calls[0].clone();
    assert_eq!(call.id.as_deref(), Some("call_abc"));
    assert_eq!(call.arguments, json!({"path": "stats/median.py"}));
    history.push(Message::Assistant(r.message));
    history.push(Message::tool_result(&call, "contents"));
    model
        .complete(&Request {
            messages: &history,
            tools: &tools,
            sample: None,
        })
        .await
        .unwrap();

    let reqs = server.received_requests().await.unwrap();
    assert_eq!(
        reqs[0].headers.get("authorization").unwrap(),
        "Bearer sk-test"
    );
    let bodies = sent_bodies(&server).await;
    assert_eq!(bodies[0]["tool_choice"], "required");
    assert_eq!(bodies[0]["temperature"], 0.0);
    assert_eq!(bodies[0]["tools"][0]["function"]["name"], "view_file");
    let msgs = bodies[1]["messages"].as_array().unwrap();
    assert_eq!(
        msgs[2],
        openai_tool_response()["choices"][0]["message"],
        "raw replay"
    );
    assert_eq!(
        msgs[3],
        json!({"role": "tool", "tool_call_id": "call_abc", "content": "contents"})
    );
}

#[tokio::test]
async fn openai_text_calls_are_recognised_and_answered_as_user_messages() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(openai_text(
            "```json\n{\"name\": \"view_file\", \"arguments\": {\"path\": \"a.py\"}}\n```",
        )))
        .mount(&server)
        .await;
    let model = OpenAi::new(&server.uri(), "m", opts()).unwrap();
    let tools = tools();
    let mut history = vec![Message::user("fix")];
    let r = model
        .complete(&Request {
            messages: &history,
            tools: &tools,
            sample: None,
        })
        .await
        .unwrap();
    let call = r.message.tool_calls[0].clone();
    assert!(call.from_text);
    assert_eq!(call.name, "view_file");
    history.push(Message::Assistant(r.message));
    history.push(Message::tool_result(&call, "ok"));
    model
        .complete(&Request {
            messages: &history,
            tools: &tools,
            sample: None,
        })
        .await
        .unwrap();
    let bodies = sent_bodies(&server).await;
    let msgs = bodies[1]["messages"].as_array().unwrap();
    // No tool message without a structured call to answer: the result goes back as user text.
    assert_eq!(msgs[2]["role"], "user");
    assert!(msgs[2]["content"].as_str().unwrap().contains("view_file"));
    assert!(msgs.iter().all(|m| m["role"] != "tool"));
}

#[tokio::test]
async fn openai_broken_arguments_become_an_error_value_not_a_crash() {
    let server = MockServer::start().await;
    let mut body = openai_tool_response();
    body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = json!("{\"path\": ");
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(&server)
        .await;
    let model = OpenAi::new(&server.uri(), "m", opts()).unwrap();
    let r = model
        .complete(&Request {
            messages: &[Message::user("x")],
            tools: &tools(),
            sample: None,
        })
        .await
        .unwrap();
    assert!(r.message.tool_calls[0].invalid_arguments.is_some());
}

#[tokio::test]
async fn openai_429_with_retry_after_is_retried_after_that_delay() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "3")
                .set_body_json(json!({"error": {"message": "Rate limit", "type": "rate_limit_error", "code": null}})),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(openai_text("done")))
        .mount(&server)
        .await;
    let clock = Arc::new(FakeClock::new(1.0));
    let model = OpenAi::new(&server.uri(), "m", opts())
        .unwrap()
        .with_clock(clock.clone());
    let r = model
        .complete(&Request {
            messages: &[Message::user("x")],
            tools: &[],
            sample: None,
        })
        .await
        .unwrap();
    assert_eq!(r.message.content, "done");
    assert_eq!(clock.sleeps(), vec![Duration::from_secs(3)]);
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn openai_body_cut_mid_stream_is_retried() {
    let server = MockServer::start().await;
    let full = serde_json::to_string(&openai_text("done")).unwrap();
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(full[..full.len() / 2].to_string(), "application/json"),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(full, "application/json"))
        .mount(&server)
        .await;
    let clock = Arc::new(FakeClock::new(0.0));
    let model = OpenAi::new(&server.uri(), "m", opts())
        .unwrap()
        .with_clock(clock.clone());
    let r = model
        .complete(&Request {
            messages: &[Message::user("x")],
            tools: &[],
            sample: None,
        })
        .await
        .unwrap();
    assert_eq!(r.message.content, "done");
    assert_eq!(clock.sleeps().len(), 1);
}

#[tokio::test]
async fn openai_client_errors_are_never_retried() {
    for status in [400u16, 401, 403, 422] {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(status).set_body_json(json!({"error": {"message": "bad"}})),
            )
            .expect(1)
            .mount(&server)
            .await;
        let model = OpenAi::new(&server.uri(), "m", opts())
            .unwrap()
            .with_clock(Arc::new(FakeClock::new(1.0)));
        let err = model
            .complete(&Request {
                messages: &[Message::user("x")],
                tools: &[],
                sample: None,
            })
            .await
            .unwrap_err();
        assert!(
            matches!(err, ModelError::Rejected { status: s, .. } if s == status),
            "{err:?}"
        );
    }
}

#[tokio::test]
async fn openai_context_exceeded_is_its_own_error() {
    let server = MockServer::start().await;
    // llama.cpp server's shape.
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({"error": {
            "code": 400, "message": "request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it",
            "type": "exceed_context_size_error", "n_prompt_tokens": 5000, "n_ctx": 4096}})))
        .mount(&server)
        .await;
    let model = OpenAi::new(&server.uri(), "m", opts()).unwrap();
    let err = model
        .complete(&Request {
            messages: &[Message::user("x")],
            tools: &[],
            sample: None,
        })
        .await
        .unwrap_err();
    assert!(matches!(err, ModelError::ContextExceeded(_)), "{err:?}");
}

#[tokio::test]
async fn openai_model_not_found() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(404).set_body_json(json!({"error": {
            "message": "The model `gpt-9` does not exist or you do not have access to it.",
            "type": "invalid_request_error", "param": null, "code": "model_not_found"}})))
        .mount(&server)
        .await;
    let model = OpenAi::new(&server.uri(), "gpt-9", opts()).unwrap();
    let err = model
        .complete(&Request {
            messages: &[Message::user("x")],
            tools: &[],
            sample: None,
        })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("gpt-9"), "{err}");
    assert!(matches!(err, ModelError::ModelNotFound { .. }));
}

#[test]
fn assistant_message_without_raw_is_rebuilt() {
    let m = Message::Assistant(AssistantMessage {
        content: "hi".into(),
        tool_calls: vec![],
        raw: None,
    });
    let v = patchloop::agent::model::openai::wire_messages(&[m]);
    assert_eq!(v[0], json!({"role": "assistant", "content": "hi"}));
}

#[tokio::test]
async fn anthropic_messages_api_tool_use_round_trip() {
    use patchloop::agent::model::anthropic::Anthropic;
    let server = MockServer::start().await;
    let reply = json!({
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-x",
        "content": [{"type": "text", "text": "Looking."},
                    {"type": "tool_use", "id": "toolu_01", "name": "view_file", "input": {"path": "a.py"}}],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 50, "output_tokens": 9}
    });
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(200).set_body_json(reply.clone()))
        .mount(&server)
        .await;
    let o = ModelOptions {
        api_key: Some("k".into()),
        tool_choice: ToolChoice::Required,
        ..opts()
    };
    let model = Anthropic::new(&server.uri(), "claude-x", o).unwrap();
    let tools = tools();
    let mut history = vec![Message::system("sys"), Message::user("fix")];
    let r = model
        .complete(&Request {
            messages: &history,
            tools: &tools,
            sample: None,
        })
        .await
        .unwrap();
    assert_eq!(r.finish, FinishReason::ToolCalls);
    assert_eq!(r.usage.total(), 59);
    let call = r.message.tool_calls[0].clone();
    assert_eq!(call.id.as_deref(), Some("toolu_01"));
    history.push(Message::Assistant(r.message));
    history.push(Message::tool_result(&call, "1  x = 1"));
    model
        .complete(&Request {
            messages: &history,
            tools: &tools,
            sample: None,
        })
        .await
        .unwrap();

    let reqs = server.received_requests().await.unwrap();
    assert_eq!(reqs[0].headers.get("x-api-key").unwrap(), "k");
    assert_eq!(
        reqs[0].headers.get("anthropic-version").unwrap(),
        "2023-06-01"
    );
    let bodies = sent_bodies(&server).await;
    assert_eq!(bodies[0]["system"], "sys");
    assert_eq!(bodies[0]["tool_choice"], json!({"type": "any"}));
    assert_eq!(bodies[0]["tools"][0]["input_schema"]["required"][0], "path");
    let msgs = bodies[1]["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 3);
    assert_eq!(
        msgs[1],
        json!({"role": "assistant", "content": reply["content"]})
    );
    assert_eq!(
        msgs[2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "toolu_01", "content": "1  x = 1"})
    );
}

#[tokio::test]
async fn ollama_qwen_text_calls_and_length_cut() {
    let server = MockServer::start().await;
    let text = "<tool_call>\n{\"name\": \"run_tests\", \"arguments\": {}}\n</tool_call>";
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .respond_with(
            ResponseTemplate::new(500)
                .set_body_json(json!({"error": "llama runner process has terminated"})),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "model": "qwen2.5-coder:1.5b", "created_at": "2025-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": text},
            "done": true, "done_reason": "stop", "prompt_eval_count": 30, "eval_count": 12
        })))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "model": "qwen2.5-coder:1.5b", "created_at": "2025-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": "<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ec"},
            "done": true, "done_reason": "length", "prompt_eval_count": 30, "eval_count": 1024
        })))
        .mount(&server)
        .await;
    let clock = Arc::new(FakeClock::new(0.5));
    let model = Ollama::new(&server.uri(), "qwen2.5-coder:1.5b", opts())
        .unwrap()
        .with_clock(clock.clone());
    let req = Request {
        messages: &[Message::user("x")],
        tools: &tools(),
        sample: None,
    };
    let r = model.complete(&req).await.unwrap();
    assert_eq!(clock.sleeps().len(), 1, "the 500 was retried");
    assert_eq!(r.message.tool_calls.len(), 1);
    assert_eq!(r.message.tool_calls[0].name, "run_tests");
    assert!(r.message.tool_calls[0].from_text);
    assert_eq!(r.finish, FinishReason::Stop);
    let r = model.complete(&req).await.unwrap();
    assert_eq!(r.finish, FinishReason::Length);
    assert!(
        r.message.tool_calls[0].invalid_arguments.is_some(),
        "a call cut at the token limit is an error value"
    );
}

fn infill_request<'a>(stop: &'a [&'a str]) -> Infill<'a> {
    Infill {
        prefix: "def f(d, key):\n",
        suffix: "        return d[key]\n",
        stop,
        max_tokens: 80,
        sample: Some(Sampling {
            temperature: 0.8,
            seed: 3,
        }),
        middle: "",
        alternatives: 0,
    }
}

#[tokio::test]
async fn openai_infill_sends_the_model_familys_fim_tokens_to_completions() {
    let server = MockServer::start().await;
    // llama.cpp server's /v1/completions answer (trimmed to the fields read).
    Mock::given(method("POST"))
        .and(path("/v1/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"text": "    if key in d:", "index": 0, "logprobs": null, "finish_reason": "stop"}],
            "object": "text_completion",
            "model": "qwen2.5-coder-1.5b",
            "usage": {"completion_tokens": 7, "prompt_tokens": 44, "total_tokens": 51},
            // As llama.cpp's server reports it (b8929): the prompt evaluated past its cache.
            "timings": {"cache_n": 30, "prompt_n": 14, "prompt_ms": 210.5,
                        "prompt_per_token_ms": 15.0, "predicted_n": 7, "predicted_ms": 301.25}
        })))
        .mount(&server)
        .await;
    let model = OpenAi::new(
        &format!("{}/v1", server.uri()),
        "qwen2.5-coder-1.5b",
        opts(),
    )
    .unwrap();
    assert!(model.supports_infill());
    let f = model.infill(&infill_request(&["\n"])).await.unwrap();
    assert_eq!(f.text, "    if key in d:");
    assert_eq!((f.usage.prompt_tokens, f.usage.completion_tokens), (44, 7));
    let t = f.timings.expect("llama.cpp's timings are read");
    assert_eq!(
        (t.prompt_tokens, t.cached_tokens, t.generated_tokens),
        (14, 30, 7)
    );
    assert_eq!((t.prompt_ms, t.generation_ms), (210.5, 301.25));
    let sent = sent_bodies(&server).await;
    assert_eq!(
        sent[0],
        json!({
            "model": "qwen2.5-coder-1.5b",
            "prompt": "<|fim_prefix|>def f(d, key):\n<|fim_suffix|>        return d[key]\n<|fim_middle|>",
            "max_tokens": 80,
            "stream": false,
            "stop": ["\n"],
            "temperature": 0.8,
            "seed": 3
        })
    );
    // A model name of no known family: unsupported before anything is sent.
    let other = OpenAi::new(&format!("{}/v1", server.uri()), "gpt-4o", opts()).unwrap();
    assert!(!other.supports_infill());
    let e = other.infill(&infill_request(&[])).await.unwrap_err();
    assert!(matches!(e, ModelError::Unsupported(_)), "{e}");
    assert_eq!(sent_bodies(&server).await.len(), 1);
}

#[tokio::test]
async fn openai_infill_continues_a_given_start_and_reads_the_runner_up_tokens() {
    let server = MockServer::start().await;
    // llama.cpp server's (b8929) answer with `logprobs: 2`, as it printed it here for
    // `return a + b` (ids and bytes kept, values rounded).
    let step = |tok: &str, lp: f64, alt: &str, alp: f64| {
        json!({"id": 1, "token": tok, "bytes": tok.as_bytes(), "logprob": lp,
               "top_logprobs": [{"id": 1, "token": tok, "bytes": tok.as_bytes(), "logprob": lp},
                                {"id": 2, "token": alt, "bytes": alt.as_bytes(), "logprob": alp}]})
    };
    Mock::given(method("POST"))
        .and(path("/v1/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"text": " a + b", "index": 0, "finish_reason": "stop",
                         "logprobs": {"content": [
                             step(" a", -0.05, " b", -3.6),
                             step(" +", -0.09, " *", -2.5),
                             step(" b", -0.001, " c", -7.5)]}}],
            "usage": {"completion_tokens": 3, "prompt_tokens": 20, "total_tokens": 23}
        })))
        .mount(&server)
        .await;
    let model = OpenAi::new(
        &format!("{}/v1", server.uri()),
        "qwen2.5-coder-1.5b",
        opts(),
    )
    .unwrap();
    let mut req = infill_request(&["\n"]);
    req.middle = "    return";
    req.alternatives = 2;
    let f = model.infill(&req).await.unwrap();
    assert_eq!(f.text, " a + b", "the start is not repeated");
    let alts: Vec<(String, String)> = f
        .alternatives
        .iter()
        .map(|a| (a.before.clone(), a.token.clone()))
        .collect();
    assert_eq!(
        alts,
        [
            (" a".to_string(), " *".to_string()),
            (String::new(), " b".to_string()),
            (" a +".to_string(), " c".to_string()),
        ],
        "most likely first, each after the generated text before it"
    );
    assert!((f.alternatives[0].logprob - (-0.05 - 2.5)).abs() < 1e-9);
    let sent = sent_bodies(&server).await;
    assert_eq!(sent[0]["logprobs"], json!(2));
    assert!(
        sent[0]["prompt"]
            .as_str()
            .unwrap()
            .ends_with("<|fim_middle|>    return"),
        "{}",
        sent[0]["prompt"]
    );
    // Not asked: no `logprobs` key.
    req.alternatives = 0;
    model.infill(&req).await.unwrap();
    assert!(sent_bodies(&server).await[1].get("logprobs").is_none());
    // OpenAI's legacy form of the same; a form it does not know: none.
    let legacy = json!({"tokens": [" a", " +"], "token_logprobs": [-0.05, -0.09],
                        "top_logprobs": [{" a": -0.05, " b": -3.6}, {" +": -0.09, " *": -2.5}]});
    let alts = patchloop::agent::model::openai::alternatives(&legacy);
    assert_eq!(alts.len(), 2);
    assert_eq!(
        (alts[0].before.as_str(), alts[0].token.as_str()),
        (" a", " *")
    );
    assert!(patchloop::agent::model::openai::alternatives(&json!({"x": 1})).is_empty());
}

#[tokio::test]
async fn ollama_infill_refuses_a_given_start_before_sending_anything() {
    let server = MockServer::start().await;
    let model = Ollama::new(&server.uri(), "qwen2.5-coder:1.5b", opts()).unwrap();
    let mut req = infill_request(&["\n"]);
    req.middle = "    return";
    let e = model.infill(&req).await.unwrap_err();
    assert!(matches!(e, ModelError::Unsupported(_)), "{e}");
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn ollama_infill_sends_prompt_and_suffix_to_generate() {
    let server = MockServer::start().await;
    // Ollama's /api/generate non-streaming answer (shape from docs/api.md).
    Mock::given(method("POST"))
        .and(path("/api/generate"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "model": "qwen2.5-coder:1.5b",
            "created_at": "2026-12-01T15:00:00Z",
            "response": "    if key in d:",
            "done": true,
            "done_reason": "stop",
            "prompt_eval_count": 40,
            "eval_count": 6
        })))
        .mount(&server)
        .await;
    let model = Ollama::new(&server.uri(), "qwen2.5-coder:1.5b", opts()).unwrap();
    assert!(model.supports_infill());
    let f = model.infill(&infill_request(&["\n"])).await.unwrap();
    assert_eq!(f.text, "    if key in d:");
    assert_eq!(f.usage.total(), 46);
    assert_eq!(
        sent_bodies(&server).await[0],
        json!({
            "model": "qwen2.5-coder:1.5b",
            "prompt": "def f(d, key):\n",
            "suffix": "        return d[key]\n",
            "stream": false,
            "keep_alive": "5m",
            "options": {"num_predict": 80, "stop": ["\n"], "num_ctx": 4096, "temperature": 0.8, "seed": 3}
        })
    );
}
