//! The agent: model adapters, tools, the episode loop, trajectories and `patchloop fix`.
//!
//! Read [`episode`] first: the whole loop is one function, top to bottom.

pub mod compact;
pub mod demo;
pub mod episode;
pub mod fix;
pub mod model;
pub mod repair;
#[doc(hidden)]
pub mod testing;
pub mod tools;
pub mod trajectory;
