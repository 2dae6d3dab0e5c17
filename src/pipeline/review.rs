//! The verifier's optional model review (`verify.review_model`, issue #23 layer 5) backed by
//! one of the agent's model adapters: the verifier sits below the agent, so the adapter is
//! handed to it from here.

use std::sync::Arc;

use async_trait::async_trait;

use crate::agent::attempt::{Ledger, Metered};
use crate::agent::model::{self, Message, Model, ModelOptions, Request, Sampling};
use crate::verify::review::{ReviewModel, Reviewer};

/// A chat model answering the review rubric: one user message, no tools, greedy; every call
/// through the repair's ledger (asked first, charged to `tier` after) when it has one.
pub struct ModelReviewer {
    model: Arc<dyn Model>,
    meter: Option<(Arc<Ledger>, usize)>,
}

#[async_trait]
impl Reviewer for ModelReviewer {
    async fn ask(&self, prompt: &str) -> Result<String, String> {
        let messages = [Message::User {
            content: prompt.to_string(),
        }];
        let req = Request {
            messages: &messages,
            tools: &[],
            sample: Some(Sampling {
                temperature: 0.0,
                seed: 0,
            }),
        };
        let r = match &self.meter {
            Some((ledger, tier)) => {
                Metered::new(self.model.as_ref(), ledger, *tier)
                    .complete(&req)
                    .await
            }
            None => self.model.complete(&req).await,
        }
        .map_err(|e| e.to_string())?;
        Ok(r.message.content)
    }

    fn describe(&self) -> String {
        self.model.describe()
    }
}

/// The configured review model (`verify.review_model`), shared by the repair's judgements.
#[derive(Clone)]
pub struct ReviewSpec(pub Arc<dyn Model>);

impl std::fmt::Debug for ReviewSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ReviewSpec({})", self.0.describe())
    }
}

/// The reviewer of one repair: the model with every call charged to its ledger.
pub fn metered(spec: ReviewSpec, ledger: Arc<Ledger>, tier: usize) -> ReviewModel {
    ReviewModel(Arc::new(ModelReviewer {
        model: spec.0,
        meter: Some((ledger, tier)),
    }))
}

/// The review model the configuration asks for (`None`: off, the default).
pub fn from_config(spec: Option<&str>, opts: &ModelOptions) -> anyhow::Result<Option<ReviewSpec>> {
    let Some(spec) = spec.filter(|s| !s.trim().is_empty()) else {
        return Ok(None);
    };
    let m = model::from_spec(spec, opts)
        .map_err(|e| anyhow::anyhow!("verify.review_model `{spec}` cannot be used: {e}"))?;
    Ok(Some(ReviewSpec(Arc::from(m))))
}

/// A reviewer outside any repair (no ledger): `patchloop verify` and tests.
pub fn unmetered(spec: ReviewSpec) -> ReviewModel {
    ReviewModel(Arc::new(ModelReviewer {
        model: spec.0,
        meter: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_scripted_model_answers_the_rubric() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("review.yaml");
        std::fs::write(
            &script,
            // A sampled request is answered from `candidates` (see `scripted`).
            "candidates:\n  - \"VERDICT: fitted\\nCLASS: answer_table\\nLINE: return 1\"\n",
        )
        .unwrap();
        let spec = format!("scripted:{}", script.display());
        let m = from_config(Some(&spec), &ModelOptions::default())
            .unwrap()
            .unwrap();
        // Charged to the repair's ledger, one call per question.
        let ledger = Arc::new(Ledger::new(crate::config::Budgets::default()));
        let r = metered(m, ledger.clone(), 1);
        let a = r.0.ask("the rubric").await.unwrap();
        assert!(a.starts_with("VERDICT: fitted"), "{a}");
        assert_eq!(ledger.total().calls, 1);
        assert_eq!(ledger.report(None).tiers.len(), 2, "booked on tier 1");
        assert!(r.0.describe().contains("scripted"), "{}", r.0.describe());
        assert!(
            from_config(None, &ModelOptions::default())
                .unwrap()
                .is_none()
        );
        let e = from_config(Some("nonsense"), &ModelOptions::default())
            .err()
            .unwrap();
        assert!(
            e.to_string().contains("verify.review_model `nonsense`"),
            "{e}"
        );
    }
}
