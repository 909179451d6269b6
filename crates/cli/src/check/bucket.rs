//! `serverlab check bucket`'s own flags.

use super::Checker;
use crate::limits;
use serverlab_check::Bucket;

#[derive(clap::Args)]
pub struct Flags {
    /// The server's number of buckets [default: found by probing on throw-away connections]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    buckets: Option<u64>,
    #[command(flatten)]
    limits: limits::Bucket,
}

impl Checker for Flags {
    const ABOUT: &'static str =
        "Delay-and-add buckets: every rule, then concurrent adds, checked per bucket";
    type Check = Bucket;

    fn check(self) -> Bucket {
        Bucket {
            buckets: self.buckets,
            ..Bucket::new(self.limits.get())
        }
    }
}
