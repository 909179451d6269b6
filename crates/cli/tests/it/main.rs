//! Black-box tests: the real `serverlab` binary on 127.0.0.1, port 0.

mod board;
mod bucket;
mod cli;
mod echo;
mod kv;
mod kv_interop;
mod load_board;
mod load_bucket;
mod load_kv;
mod load_openloop;
mod strategies;
mod support;
mod sweep;
