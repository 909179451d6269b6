//! Black-box tests: the real `serverlab` binary on 127.0.0.1, port 0.
// A test reads as one story; the 60-line limit is for the code under test.
#![allow(clippy::too_many_lines)]

// First, so its macros (the per-strategy matrices) are in scope below.
#[macro_use]
mod support;

mod agents;
mod benches;
mod board;
mod bucket;
mod certified;
mod check;
mod check_resp;
mod cli;
mod completions;
mod csv_output;
mod dashboard;
mod deploy;
mod docs_links;
mod durability;
mod echo;
mod erss_cap;
mod first_hour;
mod first_hour_numbers;
mod fit;
mod hostile_conn;
mod hostile_flow;
mod hostile_servers;
mod kv;
mod kv_interop;
mod ledger_verdict;
mod lists;
mod load_board;
mod load_bucket;
mod load_http;
mod load_kv;
mod load_metrics;
mod load_nginx;
mod load_openloop;
mod load_pubsub;
mod load_resp;
mod load_resp_own;
mod load_tls;
mod metrics;
mod poll;
mod protocols;
mod readme_tour;
mod redis_suite;
mod resp;
mod resp_colls;
mod resp_interop;
mod resp_introspect;
mod resp_keys;
mod resp_lists;
mod resp_monitor;
mod resp_notify;
mod resp_pubsub;
mod resp_sort;
mod resp_strings;
mod resp_txn;
mod slurm;
mod strategies;
mod sweep;
mod terminal;
mod time_all;
mod tls;
mod unix_socket;
