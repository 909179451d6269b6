//! `serverlab check board`'s own flags.

use super::Checker;
use crate::limits;
use serverlab_check::Board;

#[derive(clap::Args)]
pub struct Flags {
    /// Also send EXIT, as the last case: it stops the server
    #[arg(long)]
    include_exit: bool,
    #[command(flatten)]
    limits: limits::Board,
}

impl Checker for Flags {
    const ABOUT: &'static str = "The message board: every rule of the CAPS protocol, then \
        POST/READ/COUNT/LIST from many clients, checked for linearizability per topic";
    type Check = Board;

    fn check(self) -> Board {
        Board {
            include_exit: self.include_exit,
            ..Board::new(self.limits.get())
        }
    }
}
