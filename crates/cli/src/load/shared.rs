//! The flags every protocol's load takes besides its load model
//! ([`super::PacingArgs`]), declared once: `--seed`, `--verify`, the
//! ledger (kv and resp), the bounds and the output. Their help says what
//! each protocol does with them ([`LoadHelp`]); what differs in kind —
//! whether there is a ledger, which formats it prints — is a type.

use super::bounds::{BoundArgs, ReplyTimeout};
use clap::{Args, FromArgMatches};

/// A protocol's words for the shared flags (and, as a [`ReplyTimeout`],
/// its `--reply-timeout` default).
pub trait LoadHelp: ReplyTimeout {
    /// `--seed`: what it seeds.
    const SEED: &'static str;
    /// `--verify`: what it checks.
    const VERIFY: &'static str;
}

/// The shared flags of a load whose help `H` words, with ledger flags `L`
/// ([`NoLedger`] or [`super::ledger::LedgerArgs`]) and output flags `O`
/// ([`super::OutputArgs`] or [`super::PlainOutputArgs`]).
#[derive(Args)]
pub struct LoadArgs<H, L, O>
where
    H: LoadHelp,
    L: Args + FromArgMatches,
    O: Args + FromArgMatches,
{
    #[arg(long, default_value_t = 1, help = H::SEED)]
    pub seed: u64,
    #[arg(long, help = H::VERIFY)]
    pub verify: bool,
    #[command(flatten)]
    pub ledger: L,
    #[command(flatten)]
    pub bounds: BoundArgs<H>,
    #[command(flatten)]
    pub output: O,
}

/// A load without a ledger (board, bucket): no flags.
#[derive(Args)]
pub struct NoLedger {}
