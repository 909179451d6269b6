//! `--durability`, `--data-dir` and `--recover`, which `serve kv` and
//! `serve resp` share: opening (and replaying) the write-ahead log before
//! the server listens, and what the startup line says about it.

use crate::args;
use anyhow::Context;
use clap::error::ErrorKind;
use serverlab_server::StrategyKind;
use serverlab_service::wal::{
    ApplyError, Committer, Durability, Failure, FailureHook, Options, Recover, Wal,
};
use serverlab_util::Named;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// What the server does once its log fails (`--on-log-error`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnLogError {
    /// Serve on: refuse every write with the protocol's error, serve reads
    /// from the writes acknowledged before the failure.
    #[default]
    Refuse,
    /// Exit (status 1) at once, for a supervisor that restarts the server.
    Exit,
}

impl Named for OnLogError {
    const WHAT: &'static str = "log error policy";
    const ALL: &'static [Self] = &[OnLogError::Refuse, OnLogError::Exit];

    fn name(self) -> &'static str {
        match self {
            OnLogError::Refuse => "refuse",
            OnLogError::Exit => "exit",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            OnLogError::Refuse => {
                "serve on: refuse writes with an error reply, serve what was acknowledged"
            }
            OnLogError::Exit => "exit (status 1) at once, for a supervisor to restart",
        }
    }
}

serverlab_util::named_enum_impls!(OnLogError);

/// Who writes and syncs `always`'s records (`--committer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitterArg {
    /// The log's own thread, woken by every append.
    Thread,
    /// The event loop, at the end of each pass (uring only).
    Loop,
    /// The writer that waits, on its own thread, when no commit is in
    /// flight (every strategy).
    Leader,
}

impl CommitterArg {
    /// `--committer`'s default: the one line to change to make another
    /// committer the default (docs/durability.md, "The waiting writer leads").
    pub const DEFAULT: CommitterArg = CommitterArg::Thread;
}

impl Named for CommitterArg {
    const WHAT: &'static str = "committer";
    const ALL: &'static [Self] = &[
        CommitterArg::Thread,
        CommitterArg::Loop,
        CommitterArg::Leader,
    ];

    fn name(self) -> &'static str {
        match self {
            CommitterArg::Thread => "thread",
            CommitterArg::Loop => "loop",
            CommitterArg::Leader => "leader",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            CommitterArg::Thread => {
                "the log's thread syncs what every thread appends; no loop waits for the disk"
            }
            CommitterArg::Loop => {
                "each io_uring ring writes and syncs its pass's records itself, as Redis's loop \
                 does: no hand-off, but the ring waits for the disk (--strategy uring only)"
            }
            CommitterArg::Leader => {
                "no log thread: a writer that waits for its commit writes and syncs every \
                 pending record itself when no sync is in flight, else waits for it (and \
                 leads the next); its thread (or worker, or loop) waits for the disk meanwhile"
            }
        }
    }
}

serverlab_util::named_enum_impls!(CommitterArg);

#[derive(clap::Args)]
#[command(next_help_heading = "Durability (docs/durability.md)")]
pub struct DurabilityArgs {
    /// How durable a write is before its reply (docs/durability.md)
    #[arg(long, default_value_t = Durability::None, value_parser = args::named::<Durability>())]
    durability: Durability,
    /// The directory of the write-ahead log (needed by every durability
    /// but none); one server at a time
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// What replay does with a log corrupt before its tail (a torn tail is
    /// always cut)
    #[arg(long, default_value_t = Recover::Strict, value_parser = args::named::<Recover>())]
    recover: Recover,
    /// What the server does once a write or fsync of its log fails (no
    /// write is acknowledged after it either way)
    #[arg(long, default_value_t = OnLogError::Refuse, value_parser = args::named::<OnLogError>())]
    on_log_error: OnLogError,
    /// Under --durability always, who writes and syncs the records
    #[arg(long, default_value_t = CommitterArg::DEFAULT, value_parser = args::named::<CommitterArg>())]
    committer: CommitterArg,
    /// Test-only: every data fsync after this many fails with EIO
    #[arg(long, hide = true, value_name = "N")]
    fail_syncs_after: Option<u64>,
    /// Test-only: no compaction while the log files are under this many
    /// bytes (default 64 MiB)
    #[arg(long, hide = true, value_name = "BYTES")]
    compaction_floor: Option<u64>,
    /// Tests and measurement only: sleep this long before every fsync (a
    /// slow disk, or a commit delay that gathers more records per fsync)
    #[arg(long, hide = true, value_name = "T", value_parser = args::duration)]
    fsync_delay: Option<Duration>,
    /// Measurement only: under always, wait this long after a record
    /// arrives before syncing its batch, so more records join it
    #[arg(long, hide = true, value_name = "T", value_parser = args::duration)]
    commit_delay: Option<Duration>,
}

impl DurabilityArgs {
    /// Opens the log in `--data-dir`, replaying it into `apply`; `None`
    /// under `--durability none`. Exits 2 when the flags do not fit.
    pub fn open(
        &self,
        protocol: &str,
        strategy: StrategyKind,
        apply: impl FnMut(&[u8]) -> Result<(), ApplyError>,
    ) -> anyhow::Result<Option<Wal>> {
        let dir = match (self.durability, &self.data_dir) {
            (Durability::None, None) => return Ok(None),
            (Durability::None, Some(_)) => usage_error(
                protocol,
                ErrorKind::ArgumentConflict,
                "--data-dir keeps a log only with --durability os, everysec or always".into(),
            ),
            (d, None) => usage_error(
                protocol,
                ErrorKind::MissingRequiredArgument,
                format!("--durability {d} needs --data-dir DIR, where its log is kept"),
            ),
            (_, Some(dir)) => dir,
        };
        let mut opts = Options::new(self.durability);
        opts.recover = self.recover;
        if let Some(floor) = self.compaction_floor {
            opts.compaction_floor = floor;
        }
        opts.fsync_delay = self.fsync_delay.unwrap_or(Duration::ZERO);
        opts.commit_delay = self.commit_delay.unwrap_or(Duration::ZERO);
        opts.fail_syncs_after = self.fail_syncs_after;
        // An io_uring ring may commit its pass's writes itself, as Redis's
        // event loop does (docs/durability.md, "Group commit").
        if self.committer == CommitterArg::Loop {
            if strategy != StrategyKind::Uring {
                usage_error(
                    protocol,
                    ErrorKind::ArgumentConflict,
                    format!(
                        "--committer loop needs --strategy uring, whose rings commit their own \
                         passes; --strategy {strategy} hands its records to the log's thread \
                         (--committer thread)"
                    ),
                );
            }
            opts.committer = Committer::Caller;
        }
        // Any strategy's waiting writer may lead the commit
        // (docs/durability.md, "The waiting writer leads").
        if self.committer == CommitterArg::Leader {
            opts.committer = Committer::Leader;
        }
        opts.on_failure = Some(failure_hook(self.on_log_error));
        let wal = Wal::open(dir, opts, apply)
            .with_context(|| format!("cannot open the log in {}", dir.display()))?;
        Ok(Some(wal))
    }
}

/// Says at once, on stderr, which file failed and how, and what the
/// server does now: refuse writes, or exit.
fn failure_hook(policy: OnLogError) -> FailureHook {
    FailureHook(Arc::new(move |f: &Failure| {
        let what = match policy {
            OnLogError::Refuse => "writes are refused from now on and reads serve the writes acknowledged before it; restart the server once the disk is mended",
            OnLogError::Exit => "exiting (--on-log-error exit)",
        };
        serverlab_server::warn(&format!(
            "serverlab: the write-ahead log failed: {f}; {what}"
        ));
        if policy == OnLogError::Exit {
            std::process::exit(1);
        }
    }))
}

/// The startup line's words on durability: the mode, the directory and
/// what replay found.
pub fn describe(wal: Option<&Wal>) -> String {
    match wal {
        None => "durability none".into(),
        Some(w) => format!(
            "durability {}{}, data dir {}, {}",
            w.durability(),
            match (w.durability(), w.committer()) {
                (Durability::Always, Committer::Caller) => " (each ring commits its pass)",
                (Durability::Always, Committer::Leader) => " (the waiting writer commits)",
                _ => "",
            },
            w.dir().display(),
            w.recovery()
        ),
    }
}

/// A usage error of `serve <protocol>` in clap's style (exit 2).
fn usage_error(protocol: &str, kind: ErrorKind, msg: String) -> ! {
    crate::usage_error_of("serve", protocol, kind, msg)
}
