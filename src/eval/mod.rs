//! Evaluation: statistics, reports and the episode viewer over `results/<run-id>/`.

pub mod commands;
pub mod coverage;
pub mod evidence;
pub mod funnel;
pub mod hidden;
pub mod oracle;
pub mod plan;
pub mod realbench;
pub mod report;
pub mod results;
pub mod run;
pub mod speed;
pub mod stats;
pub mod trajectory;
pub mod viewer;
