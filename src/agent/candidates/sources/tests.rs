//! The fill memo: a request answered once per run.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::fill::{FillMemo, infill_at};
use super::sampling;
use crate::agent::candidates::{InfillShape, Problem, Site};
use crate::agent::model::{Infill, Model, ModelError, Request, Usage};

/// Answers every fill with the number of the call, and counts the calls.
struct Numbered(AtomicUsize);

#[async_trait::async_trait]
impl Model for Numbered {
    async fn complete(
        &self,
        _req: &Request<'_>,
    ) -> Result<crate::agent::model::Response, ModelError> {
        Err(ModelError::Unsupported("fills only".into()))
    }
    fn spec(&self) -> String {
        "test:numbered".into()
    }
    fn describe(&self) -> String {
        self.spec()
    }
    fn supports_infill(&self) -> bool {
        true
    }
    async fn infill(&self, _req: &Infill<'_>) -> Result<crate::agent::model::Filled, ModelError> {
        let n = self.0.fetch_add(1, Ordering::SeqCst);
        Ok(crate::agent::model::Filled {
            text: format!("    return {n}"),
            usage: Usage {
                prompt_tokens: 10,
                completion_tokens: 3,
            },
            timings: None,
            alternatives: Vec::new(),
        })
    }
}

#[tokio::test]
async fn the_same_fill_request_is_answered_once_and_costs_nothing_the_second_time() {
    let src = "def f(a):\n    b = a\n    return b\n";
    let problem = Problem::one_suspect("m.py", "f", src, "", (1, 3), &[3]);
    let site = |line| Site {
        path: "m.py".into(),
        line,
        end: line,
        shape: InfillShape::Line,
        func: (1, 3),
        score: 1.0,
    };
    let model = Numbered(AtomicUsize::new(0));
    let memo = FillMemo::default();
    let greedy = sampling(0, 0.8);
    let first = infill_at(&model, &problem, &site(3), greedy, "", &memo)
        .await
        .unwrap();
    let again = infill_at(&model, &problem, &site(3), greedy, "", &memo)
        .await
        .unwrap();
    assert_eq!(model.0.load(Ordering::SeqCst), 1, "asked once");
    assert_eq!(again.text, first.text);
    assert_eq!(again.usage, Usage::default(), "no tokens spent on a reuse");
    assert!(again.reused && !first.reused);
    assert_eq!(first.usage.prompt_tokens, 10);
    // Another seed, another start, another site, or another text around the gap: asked.
    infill_at(&model, &problem, &site(3), sampling(1, 0.8), "", &memo)
        .await
        .unwrap();
    infill_at(&model, &problem, &site(3), greedy, "    return", &memo)
        .await
        .unwrap();
    infill_at(&model, &problem, &site(2), greedy, "", &memo)
        .await
        .unwrap();
    let mut edited = problem.clone();
    edited
        .files
        .insert("m.py".into(), src.replace("b = a", "b = -a"));
    let other = infill_at(&model, &edited, &site(3), greedy, "", &memo)
        .await
        .unwrap();
    assert_eq!(model.0.load(Ordering::SeqCst), 5);
    assert_eq!(other.text, "    return 4");
}
