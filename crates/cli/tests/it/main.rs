//! Black-box tests: the real `serverlab` binary on 127.0.0.1, port 0.

// First, so its macros (the per-strategy matrices) are in scope below.
#[macro_use]
mod support;

mod board;
mod bucket;
mod check;
mod check_resp;
mod cli;
mod echo;
mod first_hour;
mod first_hour_numbers;
mod hostile_conn;
mod hostile_flow;
mod hostile_servers;
mod kv;
mod kv_interop;
mod lists;
mod load_board;
mod load_bucket;
mod load_kv;
mod load_openloop;
mod load_resp;
mod readme_tour;
mod resp;
mod resp_interop;
mod strategies;
mod sweep;
mod terminal;
