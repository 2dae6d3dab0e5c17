//! Dollars per token for known hosted models. A model not in the table (every self-hosted one)
//! costs $0, but its tokens are still counted and still meet `--max-tokens`.

use super::Usage;

/// (spec suffix, $ per million input tokens, $ per million output tokens).
const TABLE: &[(&str, f64, f64)] = &[
    ("gpt-4o-mini", 0.15, 0.60),
    ("gpt-4o", 2.50, 10.00),
    ("gpt-4.1-mini", 0.40, 1.60),
    ("gpt-4.1", 2.00, 8.00),
    ("claude-3-5-haiku", 0.80, 4.00),
    ("claude-sonnet-4", 3.00, 15.00),
];

/// Price of a usage for a spec like `openai:gpt-4o-mini`; unknown models are free.
pub fn cost(spec: &str, usage: &Usage) -> f64 {
    let model = spec.split_once(':').map(|(_, m)| m).unwrap_or(spec);
    // Longest matching name first, so `gpt-4o-mini` is not priced as `gpt-4o`.
    let best = TABLE
        .iter()
        .filter(|(name, _, _)| model == *name || model.starts_with(&format!("{name}-")))
        .max_by_key(|(name, _, _)| name.len());
    match best {
        Some((_, input, output)) => {
            (usage.prompt_tokens as f64 * input + usage.completion_tokens as f64 * output) / 1e6
        }
        None => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_and_unknown_models() {
        let u = Usage {
            prompt_tokens: 1_000_000,
            completion_tokens: 1_000_000,
        };
        assert!((cost("openai:gpt-4o-mini", &u) - 0.75).abs() < 1e-9);
        assert!((cost("openai:gpt-4o", &u) - 12.5).abs() < 1e-9);
        assert!((cost("openai:gpt-4o-2024-08-06", &u) - 12.5).abs() < 1e-9);
        assert_eq!(cost("ollama:qwen2.5-coder:1.5b", &u), 0.0);
        assert_eq!(cost("openai:qwen2.5-coder-0.5b", &u), 0.0);
    }
}
