//! The agent: model adapters, tools, the episode loop, the candidate strategy, compaction, the task text and
//! trajectories. It reaches containers only through the [`crate::sandbox::Sandbox`] trait;
//! the pipeline that prepares images and verifies patches is [`crate::pipeline`].
//!
//! Read [`episode`] first: the whole loop is one function, top to bottom.

pub mod attempt;
pub mod candidates;
pub mod compact;
pub mod context;
pub mod demo;
pub mod episode;
pub mod localize;
pub mod model;
pub mod origin;
pub mod report;
pub mod strategy;
pub mod task;
#[doc(hidden)]
pub mod testing;
pub mod tools;
pub mod trajectory;
