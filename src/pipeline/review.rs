//! The verifier's optional model review (`verify.review_model`, issue #23 layer 5) backed by
//! one of the agent's model adapters: the verifier sits below the agent, so the adapter is
//! handed to it from here.

use async_trait::async_trait;

use crate::agent::model::{self, Message, Model, ModelOptions, Request, Sampling};
use crate::verify::review::{ReviewModel, Reviewer};

/// A chat model answering the review rubric: one user message, no tools, greedy.
pub struct ModelReviewer(pub Box<dyn Model>);

#[async_trait]
impl Reviewer for ModelReviewer {
    async fn ask(&self, prompt: &str) -> Result<String, String> {
        let messages = [Message::User {
            content: prompt.to_string(),
        }];
        let r = self
            .0
            .complete(&Request {
                messages: &messages,
                tools: &[],
                sample: Some(Sampling {
                    temperature: 0.0,
                    seed: 0,
                }),
            })
            .await
            .map_err(|e| e.to_string())?;
        Ok(r.message.content)
    }

    fn describe(&self) -> String {
        self.0.describe()
    }
}

/// The reviewer the configuration asks for (`None`: off, the default).
pub fn from_config(spec: Option<&str>, opts: &ModelOptions) -> anyhow::Result<Option<ReviewModel>> {
    let Some(spec) = spec.filter(|s| !s.trim().is_empty()) else {
        return Ok(None);
    };
    let m = model::from_spec(spec, opts)
        .map_err(|e| anyhow::anyhow!("verify.review_model `{spec}` cannot be used: {e}"))?;
    Ok(Some(ReviewModel(std::sync::Arc::new(ModelReviewer(m)))))
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
        let r = from_config(Some(&spec), &ModelOptions::default())
            .unwrap()
            .unwrap();
        let a = r.0.ask("the rubric").await.unwrap();
        assert!(a.starts_with("VERDICT: fitted"), "{a}");
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
