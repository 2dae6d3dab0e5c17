//! The integration tests: one test binary, one module per subject. Each binary links every
//! dependency (~50 MB apiece), so one binary instead of twenty-odd keeps a clean build's
//! target/ about a gigabyte smaller and links once. The security suite is its own binary
//! (`tests/security.rs`): it plants canary secrets in its process environment.
//!
//! Run one subject with a filter: `cargo test --test integration prepare::`.
//! Modules here share the process and run on parallel threads: a test must not remove an
//! image or container another module may be using, nor change the process environment.

mod agent_common;
mod github_common;
mod verify_common;

mod agent_bench;
mod agent_cli;
mod agent_docker;
mod agent_episode;
mod agent_localize;
mod agent_models;
mod agent_real_model;
mod bench_gen;
mod bench_pinned;
mod bench_real;
mod env_runner;
mod eval_hidden;
mod eval_oracle;
mod eval_viewer;
mod field_subset;
mod fix_commands;
mod fix_env;
mod github_act;
mod github_action;
mod github_container;
mod github_e2e;
mod github_env_e2e;
mod github_events;
mod github_examples;
mod github_post;
mod images_prune;
mod langs;
mod mcp_server;
mod oracle_script;
mod pipeline_strategies;
mod prepare;
mod prepare_deps;
mod sandbox_test_ids;
mod verify_bench_gold;
mod verify_cli;
mod verify_consensus;
mod verify_corpus;
mod verify_differential;
mod verify_gaming;
mod verify_probe;
