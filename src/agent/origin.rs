//! Where a proposal came from, as a value: a rule of the candidates (no model call), a fill
//! at a site (its shape and how it was drawn), a chat reply, or the loop's workspace. The
//! receipt, the trajectory and eval read it; nothing parses a reply's text to find out.

use serde::{Deserialize, Serialize};

/// How a fill was drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Draw {
    /// The model's greedy answer.
    Greedy,
    /// Sampled at the candidates' temperature.
    Sampled,
    /// From the model's most likely token the greedy fill did not take.
    RunnerUp,
    /// Continued from the masked line's own text through where a fill departed from it.
    Continued,
    /// The model's departing token spliced into the masked line (no model call).
    Spliced,
    /// The same request earlier in the run: its answer again (no model call).
    Reused,
}

impl Draw {
    pub fn as_str(self) -> &'static str {
        match self {
            Draw::Greedy => "greedy",
            Draw::Sampled => "sampled",
            Draw::RunnerUp => "runner_up",
            Draw::Continued => "continued",
            Draw::Spliced => "spliced",
            Draw::Reused => "reused",
        }
    }
}

/// Where a proposal came from.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Origin {
    /// The loop's workspace at the end of its episode.
    #[default]
    Loop,
    /// A rule of the candidates, by its id (`missing_name`): no model was asked.
    Rule { rule: String },
    /// A fill-in-the-middle at a site (`pkg/m.py:12`) of a shape (`line`, `block`, `insert`,
    /// `body`).
    Fill {
        #[serde(default)]
        at: String,
        shape: String,
        draw: Draw,
    },
    /// A chat reply in an edit format (`lines`, `function`, `search_replace`), by its sample.
    Chat { sample: usize },
}

impl Origin {
    /// No model produced it (a rule, or a splice of an earlier fill).
    pub fn no_model(&self) -> bool {
        matches!(
            self,
            Origin::Rule { .. }
                | Origin::Fill {
                    draw: Draw::Spliced,
                    ..
                }
        )
    }

    /// The rule that wrote it, if one did.
    pub fn rule(&self) -> Option<&str> {
        match self {
            Origin::Rule { rule } => Some(rule),
            _ => None,
        }
    }

    /// A fill-in-the-middle answer (of the model, or reused / spliced from one).
    pub fn is_fill(&self) -> bool {
        matches!(self, Origin::Fill { .. })
    }

    /// One short word for tables: `rule missing_name`, `fill line greedy`, `chat`, `loop`.
    pub fn label(&self) -> String {
        match self {
            Origin::Loop => "loop".into(),
            Origin::Rule { rule } => format!("rule {rule}"),
            Origin::Fill { shape, draw, .. } => format!("fill {shape} {}", draw.as_str()),
            Origin::Chat { .. } => "chat".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_read_back_and_say_whether_a_model_made_them() {
        for o in [
            Origin::Loop,
            Origin::Rule {
                rule: "missing_name".into(),
            },
            Origin::Fill {
                at: "pkg/m.py:3".into(),
                shape: "line".into(),
                draw: Draw::Continued,
            },
            Origin::Chat { sample: 2 },
        ] {
            let j = serde_json::to_string(&o).unwrap();
            assert_eq!(serde_json::from_str::<Origin>(&j).unwrap(), o, "{j}");
        }
        let rule = Origin::Rule {
            rule: "unused".into(),
        };
        assert!(rule.no_model() && rule.rule() == Some("unused"));
        let splice = Origin::Fill {
            at: "pkg/m.py:3".into(),
            shape: "line".into(),
            draw: Draw::Spliced,
        };
        assert!(splice.no_model() && splice.is_fill() && splice.rule().is_none());
        assert!(!Origin::Chat { sample: 0 }.no_model());
        assert_eq!(splice.label(), "fill line spliced");
    }
}
