//! Benchmark generation: bugs injected into a Python library by syntax-tree mutation, validated
//! in the sandbox, written as SWE-bench-compatible tasks.
pub mod commands;
pub mod generate;
pub mod mutate;
pub mod sandbox_runner;
pub mod statement;
pub mod task;
pub mod validate;
