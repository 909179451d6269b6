//! Black-box tests: the real `serverlab` binary on 127.0.0.1, port 0.

mod board;
mod bucket;
mod cli;
mod echo;
mod load_board;
mod load_bucket;
mod strategies;
mod support;
