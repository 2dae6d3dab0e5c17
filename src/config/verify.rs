//! How verification judges a patch beyond the tests (`verify:` in `.github/patchloop.yml`):
//! the generalisation layers of issue #23 that cost more than the pure ones.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `verify:` as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyFile {
    /// Probe behaviour beyond the tested points: the failing tests' calls of the changed
    /// functions and relation-preserving variants of them, before and after the patch (two
    /// more runs of the failing tests; default true).
    pub probe: Option<bool>,
    /// Differential neighbourhood testing: CPU seconds per changed function (the layer's own
    /// and its calls', so a busy runner slows it without changing what it asks) for generated
    /// inputs run through the code before and after the patch (Hypothesis; a new crash, an
    /// input read whole, an error moved into the iteration); also the repair search's
    /// comparison of its passing candidates on such inputs. 0 turns both off; default 10.
    pub differential_seconds: Option<u64>,
    /// A model (spec as `--model`) that reviews each passing patch against a fixed rubric of
    /// fitted-patch classes; a `fitted` answer quoting an added line makes it needs_review.
    /// Off by default: its precision is measured in the gaming table, not assumed.
    pub review_model: Option<String>,
}

/// The differential layer's default seconds per changed function.
pub const DIFFERENTIAL_SECONDS: u64 = 10;

/// The merged `verify:` settings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verify {
    pub probe: bool,
    pub differential_seconds: u64,
    pub review_model: Option<String>,
}

impl Default for Verify {
    fn default() -> Self {
        Verify {
            probe: true,
            differential_seconds: DIFFERENTIAL_SECONDS,
            review_model: None,
        }
    }
}
