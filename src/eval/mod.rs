//! Evaluation: statistics, reports and the episode viewer over `results/<run-id>/`.

pub mod stats;
