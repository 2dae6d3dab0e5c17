//! How a repair searches: the strategies tried in order, the model tiers escalated through,
//! and the candidate strategy's knobs (`repair:` in `.github/patchloop.yml`, the action's
//! inputs, the `--strategy`/`--escalate`/`--candidates` flags).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One way of producing a patch.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
    clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// K localized edits sampled from one prompt, each fast-checked in a checkpoint of one
    /// container; the passing ones are verified, smallest diff first. With `infill`: the
    /// rules, then greedy fills of the configured shapes (one line by default) with their
    /// splices and walks.
    #[default]
    Candidates,
    /// Multi-line fills (block, insert, body) at the best sites, for a fix one line cannot
    /// express (a `try` body, a new guard, a restructured loop). Needs fill-in-the-middle.
    Shapes,
    /// Fills drawn at the temperature, several per site (line, block and insert shapes),
    /// each with its own seed, while its share of the budget lasts. Needs fill-in-the-middle.
    Sampled,
    /// The agent loop with the tools (view, search, edit, run the tests).
    Loop,
}

impl Strategy {
    pub fn as_str(&self) -> &'static str {
        match self {
            Strategy::Candidates => "candidates",
            Strategy::Shapes => "shapes",
            Strategy::Sampled => "sampled",
            Strategy::Loop => "loop",
        }
    }
}

impl std::fmt::Display for Strategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the candidate strategy asks for its edit.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum EditFormat {
    /// The whole corrected function (its docstring is neither shown nor needed back).
    Function,
    /// aider-style SEARCH/REPLACE blocks.
    // The flag takes the YAML spelling (and the kebab-case one).
    #[value(name = "search_replace", alias = "search-replace")]
    SearchReplace,
    /// `LINE <number>: <corrected line>` for each changed line of the numbered function.
    Lines,
    /// Fill-in-the-middle: each of the fault localization's most suspicious lines is masked in
    /// turn and the model writes what belongs there (coder models are trained on it); a model
    /// without it gets `lines`. The default: on the benchmark it is what small models fix
    /// bugs with.
    #[default]
    Infill,
}

impl EditFormat {
    pub fn as_str(&self) -> &'static str {
        match self {
            EditFormat::Function => "function",
            EditFormat::SearchReplace => "search_replace",
            EditFormat::Lines => "lines",
            EditFormat::Infill => "infill",
        }
    }
}

/// What one fill-in-the-middle request masks (the `infill` format's edit shapes).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum InfillShape {
    /// One of the most suspicious lines.
    Line,
    /// 2–8 lines around a most suspicious line: the body of the `if`/`for`/`while`/`try`/
    /// `with` that holds it, else its run of sibling statements (generation stops at the
    /// dedent).
    Block,
    /// New lines before a most suspicious line (a missing guard).
    Insert,
    /// The whole body of a ranked function of up to 30 lines, its signature and docstring as
    /// the specification.
    Body,
}

impl InfillShape {
    pub fn as_str(&self) -> &'static str {
        match self {
            InfillShape::Line => "line",
            InfillShape::Block => "block",
            InfillShape::Insert => "insert",
            InfillShape::Body => "body",
        }
    }
}

/// The infill shapes when nothing is configured.
pub const DEFAULT_INFILL_SHAPES: [InfillShape; 1] = [InfillShape::Line];

/// The strategies when nothing is configured: cheap localized candidates first, then the
/// loop on what they could not fix.
pub const DEFAULT_STRATEGIES: [Strategy; 2] = [Strategy::Candidates, Strategy::Loop];
pub const DEFAULT_CANDIDATES: usize = 4;
/// Bytes of failing-code context (0 turns it off).
pub const DEFAULT_CONTEXT_BYTES: usize = 3 * 1024;

/// The merged repair settings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Repair {
    pub strategies: Vec<Strategy>,
    /// Model specs tried, in order, after the first model's strategies all failed.
    pub escalate: Vec<String>,
    pub candidates: usize,
    pub edit_format: EditFormat,
    /// Candidate requests in flight at once (the model server's slots).
    pub parallel: usize,
    pub context_bytes: usize,
    /// What the `infill` format masks, shape after shape in this order (each one's sites in
    /// the spectrum's order).
    pub infill_shapes: Vec<InfillShape>,
    /// Whether a candidate's check runs while the model writes the next one; `None`: unless
    /// the model server is on this machine, where both would share its CPUs.
    pub overlap_checks: Option<bool>,
}

impl Default for Repair {
    fn default() -> Self {
        Repair {
            strategies: DEFAULT_STRATEGIES.to_vec(),
            escalate: Vec::new(),
            candidates: DEFAULT_CANDIDATES,
            edit_format: EditFormat::Infill,
            parallel: 1,
            context_bytes: DEFAULT_CONTEXT_BYTES,
            infill_shapes: DEFAULT_INFILL_SHAPES.to_vec(),
            overlap_checks: None,
        }
    }
}

/// `repair:` as written: every key optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RepairFile {
    /// Strategies (the search's stages) tried in order on each model until one gives a
    /// verified patch: `candidates`, `shapes`, `sampled`, `loop`; each gets a share of the
    /// wall time left when it starts, and `sampled` runs again while time is left and its
    /// last pass drew something new. Default: chosen per tier by the model's size read from
    /// its name — up to 3B or unknown size all four in that order, a larger or escalated
    /// model the loop (the receipt says which ran, which were skipped and why).
    pub strategies: Option<Vec<Strategy>>,
    /// Model specs escalated to, in order, when every strategy failed on the model before
    /// (e.g. [ollama:qwen2.5-coder:14b]). Default: none.
    pub escalate: Option<Vec<String>>,
    /// Candidate edits checked per model in the chat formats (default 4); a reply that does
    /// not apply or repeats an earlier edit does not count, up to twice as many replies
    /// drawn. `infill` fills its sites instead (greedy, then the best four sampled twice)
    /// until K pass, four draws after the first clean pass, or the sites run out.
    pub candidates: Option<u64>,
    /// `infill` (the model fills in the most suspicious lines; the default), `lines`
    /// (corrected lines by number), `function` (the whole corrected function) or
    /// `search_replace`.
    pub edit_format: Option<EditFormat>,
    /// Candidate requests in flight at once: the model server's parallel slots (default 1).
    pub parallel: Option<u64>,
    /// Bytes of failing-code context shown to the model (default 3072; 0 turns it off).
    pub context_bytes: Option<u64>,
    /// What `infill` masks: `line` (one suspicious line), `block` (2–8 lines around one),
    /// `insert` (new lines before one: a missing guard), `body` (a whole short function's
    /// body). Several are tried in turn, in the order given. Default: [line].
    pub infill_shapes: Option<Vec<InfillShape>>,
    /// Whether a candidate's test run may overlap the model's next fill. Default: yes when
    /// the model server is elsewhere, no when it answers on a loopback address (a model on
    /// the CI machine itself): there the two only slow each other down, and every fill's
    /// model time grows.
    pub overlap_checks: Option<bool>,
}

/// The repair flags shared by `fix` and `eval` (each unset flag leaves the configured value).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RepairArgs {
    /// Strategies (stages) in order, comma-separated: candidates, shapes, sampled, loop
    /// [default: the config's repair.strategies, else per tier by model size: ≤ 3B or
    /// unknown size all four, larger or escalated the loop].
    #[arg(long = "strategy", value_enum, value_delimiter = ',')]
    pub strategies: Vec<Strategy>,
    /// A model spec to escalate to when every strategy failed on the models before
    /// (repeatable; uses the same server flags).
    #[arg(long)]
    pub escalate: Vec<String>,
    /// Candidate edits checked per model in the chat formats; unusable or repeated replies
    /// are drawn again, up to twice as many (`infill` fills each of its lines instead, until
    /// one passes) [default: 4].
    #[arg(long)]
    pub candidates: Option<u64>,
    /// How candidates are written [default: infill].
    #[arg(long, value_enum)]
    pub edit_format: Option<EditFormat>,
    /// Candidate requests in flight at once (the model server's slots) [default: 1].
    #[arg(long)]
    pub candidate_slots: Option<u64>,
    /// Bytes of failing-code context in the first prompt; 0 turns it off [default: 3072].
    #[arg(long)]
    pub context_bytes: Option<u64>,
    /// What `infill` masks, comma-separated: line, block, insert, body [default: line].
    #[arg(long, value_enum, value_delimiter = ',')]
    pub infill_shapes: Vec<InfillShape>,
    /// Whether a candidate's check may run while the model writes the next fill [default:
    /// yes, unless the model server answers on a loopback address].
    #[arg(long, value_name = "BOOL")]
    pub overlap_checks: Option<bool>,
}

impl RepairArgs {
    /// The flags as a `repair:` layer; `None` when no flag was given.
    pub fn layer(&self) -> Option<RepairFile> {
        let f = RepairFile {
            strategies: (!self.strategies.is_empty()).then(|| self.strategies.clone()),
            escalate: (!self.escalate.is_empty()).then(|| self.escalate.clone()),
            candidates: self.candidates,
            edit_format: self.edit_format,
            parallel: self.candidate_slots,
            context_bytes: self.context_bytes,
            infill_shapes: (!self.infill_shapes.is_empty()).then(|| self.infill_shapes.clone()),
            overlap_checks: self.overlap_checks,
        };
        (f != RepairFile::default()).then_some(f)
    }
}

const STRATEGY_NAMES: &str = "candidates, shapes, sampled and/or loop";

/// Comma-separated strategies (the action's `strategies` input). Pure.
pub fn parse_strategies(s: &str) -> Result<Vec<Strategy>, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        out.push(match part {
            "candidates" => Strategy::Candidates,
            "shapes" => Strategy::Shapes,
            "sampled" => Strategy::Sampled,
            "loop" => Strategy::Loop,
            other => {
                return Err(format!(
                    "unknown strategy `{other}`: use {STRATEGY_NAMES}, comma-separated"
                ));
            }
        });
    }
    if out.is_empty() {
        return Err(format!("no strategy given: use {STRATEGY_NAMES}"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategies_parse_and_bad_names_say_what_is_accepted() {
        assert_eq!(
            parse_strategies("candidates, loop").unwrap(),
            [Strategy::Candidates, Strategy::Loop]
        );
        assert_eq!(
            parse_strategies("shapes,sampled").unwrap(),
            [Strategy::Shapes, Strategy::Sampled]
        );
        let e = parse_strategies("candidates,agentless").unwrap_err();
        assert!(
            e.contains("`agentless`") && e.contains("sampled and/or loop"),
            "{e}"
        );
        assert!(parse_strategies(" , ").is_err());
    }

    #[test]
    fn no_flag_is_no_layer() {
        assert!(RepairArgs::default().layer().is_none());
        let l = RepairArgs {
            candidates: Some(8),
            ..Default::default()
        }
        .layer()
        .unwrap();
        assert_eq!(l.candidates, Some(8));
        assert_eq!(l.strategies, None);
    }
}
