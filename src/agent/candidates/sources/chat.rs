//! `chat`: when no fill can be drawn (a chat edit format, a model without fill-in-the-middle,
//! or a server that refused it), one prompt shows the suspects and K samples are drawn, up to
//! [`DRAWS_PER_CANDIDATE`] × K replies: sample 0 greedy, the others at the temperature with
//! their own seeds.

use super::super::DRAWS_PER_CANDIDATE;
use super::super::edits::parse_reply;
use super::{Draw, DrawSource, Read, Reply, Round, sampling};
use crate::agent::model::{Model, ModelError, Request};
use crate::agent::origin::Origin;

pub(super) struct Chat;

#[async_trait::async_trait]
impl DrawSource for Chat {
    fn name(&self) -> &'static str {
        "chat"
    }

    fn plan(&self, round: &Round<'_>) -> Vec<Draw> {
        if !round.sites.is_empty() {
            return Vec::new();
        }
        (0..round.config.count.max(1) * DRAWS_PER_CANDIDATE)
            .map(|sample| Draw {
                by: &Chat,
                at: 0,
                sample,
                how: None,
                text: None,
                step: 0,
            })
            .collect()
    }

    async fn ask(&self, round: &Round<'_>, draw: &Draw) -> Result<Reply, ModelError> {
        let r = round
            .model
            .complete(&Request {
                messages: &round.history,
                tools: &[],
                sample: Some(sampling(draw.sample, round.config.temperature)),
            })
            .await?;
        Ok(Reply {
            text: r.message.content,
            usage: r.usage,
            timings: None,
            alternatives: Vec::new(),
            reused: false,
        })
    }

    fn read(&self, round: &Round<'_>, draw: &Draw, reply: &Reply) -> Read {
        Read {
            origin: Origin::Chat {
                sample: draw.sample,
            },
            label: reply.text.clone(),
            edits: parse_reply(&reply.text, &round.suspects, &round.problem.files),
        }
    }
}
