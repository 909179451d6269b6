//! `serverlab serve external --command CMD`: another program as the
//! server, so a sweep can run it where it runs serverlab's own (redis-server
//! beside `serve resp`, experiments/redis.toml). Not a protocol: the
//! smallest wrapper that gives a foreign server what the sweep expects of a
//! server — a port of its choosing, pinning, a `listening on ADDR` line,
//! and a graceful stop on SIGTERM.
//!
//! The command runs under `sh -c` (so it is written as in a shell), with
//! `$PORT` and `$HOST` set to where it must listen; `--cpus` pins it (the
//! wrapper pins itself first, and the command inherits the mask). Once the
//! port accepts connections the wrapper announces it; SIGINT or SIGTERM is
//! passed on to the command, which is waited for. Its `--stats-json` holds
//! only `{"protocol": {"external": {"command", "stopped"}}}`: no
//! connection or service-time figures, which only the foreign server
//! knows (a report shows none for it).

use super::{Protocol, ServerArgs};
use crate::args::ServeAddr;
use anyhow::{bail, Context};
use serverlab_proto::Served;
use signal_hook::consts::{SIGINT, SIGTERM};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, ExitCode};
use std::time::{Duration, Instant};

impl Args {
    /// Why `--metrics` or a flag only serverlab's own servers act on
    /// ([`Served::OWN_SERVER_FLAGS`]) is refused, naming the first given
    /// (`matches`: clap's of this command; a default is not a flag
    /// given): taken and ignored, it would mislead.
    pub fn refused(&self, matches: &clap::ArgMatches) -> Option<String> {
        use clap::parser::ValueSource;
        let (flag, why) = match (&self.server.metrics, &self.server.addr) {
            (_, Some(ServeAddr::Unix(_))) => ("--addr unix:…", UNIX_REFUSED),
            (Some(_), _) => (
                "--metrics",
                "the program it runs keeps its own counters, which serverlab cannot read",
            ),
            (None, _) => Served::OWN_SERVER_FLAGS
                .iter()
                .find(|f| matches.value_source(&f.id()) == Some(ValueSource::CommandLine))
                .map(|f| (f.flag, f.why))?,
        };
        Some(format!("{flag} is not for serve external: {why}"))
    }
}

/// Why `--addr unix:…` is refused.
const UNIX_REFUSED: &str = "the command is told where to listen as $HOST and $PORT, and \
                            serverlab waits for it on that TCP port";

/// How long the command may take to listen.
const START: Duration = Duration::from_secs(20);
/// How long it may take to stop after SIGTERM before it is killed.
const STOP: Duration = Duration::from_secs(10);
const POLL: Duration = Duration::from_millis(20);

#[derive(clap::Args)]
pub struct Args {
    /// The server to run, as a shell command, listening on $HOST:$PORT
    /// (example: 'redis-server --port $PORT --save "" --appendonly no')
    #[arg(long, value_name = "CMD")]
    command: String,
    #[command(flatten)]
    server: ServerArgs,
}

impl Protocol for Args {
    const NAME: &'static str = Served::EXTERNAL;
    const ABOUT: &'static str = "Another program as the server (redis-server, …), started, pinned and \
                                 stopped as a sweep starts serverlab's: --command 'redis-server --port $PORT'";
    const PORT: Option<u16> = None;

    fn server(&self) -> &ServerArgs {
        &self.server
    }

    fn run(self) -> anyhow::Result<ExitCode> {
        let addr = self.addr()?;
        if let Some(cpus) = &self.server.cpus {
            cpus.pin_current_thread()
                .with_context(|| format!("cannot pin to CPUs {cpus}"))?;
        }
        // Before the command starts, so no signal is missed.
        let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
            .context("cannot install signal handlers")?;
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(format!("exec {}", self.command))
            .env("PORT", addr.port().to_string())
            .env("HOST", addr.ip().to_string())
            .spawn()
            .with_context(|| format!("cannot run {}", self.command))?;
        if let Err(e) = wait_listening(&mut child, addr) {
            stop(&mut child);
            return Err(e);
        }
        let pinned = self
            .server
            .cpus
            .as_ref()
            .map(|c| format!(", cpus {c}"))
            .unwrap_or_default();
        super::say(&format!(
            "serverlab serve external: listening on {addr} (command {}{pinned})\n",
            self.command
        ));
        loop {
            if signals.pending().next().is_some() {
                let status = stop(&mut child);
                super::say(&format!("serverlab serve external: stopped ({status})\n"));
                if let Some(path) = &self.server.stats_json {
                    let stats = serde_json::json!({
                        "protocol": { "external": { "command": self.command, "stopped": status } }
                    });
                    let text = serde_json::to_string_pretty(&stats)? + "\n";
                    std::fs::write(path, text)
                        .with_context(|| format!("cannot write {}", path.display()))?;
                }
                return Ok(ExitCode::SUCCESS);
            }
            if let Some(status) = child.try_wait()? {
                bail!("the server exited by itself ({status})");
            }
            std::thread::sleep(POLL);
        }
    }
}

impl Args {
    /// Where the command must listen: `--addr`, or 127.0.0.1 and a free
    /// port (found by binding port 0; another program could take it
    /// before the command does, a race a sweep on a quiet machine loses
    /// rarely).
    fn addr(&self) -> anyhow::Result<SocketAddr> {
        let addr = match &self.server.addr {
            None => SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            Some(ServeAddr::Tcp(a)) => a.or_port(0),
            Some(ServeAddr::Unix(_)) => anyhow::bail!("{}", UNIX_REFUSED),
        };
        if addr.port() != 0 {
            return Ok(addr);
        }
        let free = TcpListener::bind(addr).with_context(|| format!("cannot bind {addr}"))?;
        Ok(free.local_addr()?)
    }
}

/// Wait until `addr` accepts connections, or fail if the command exits
/// or takes too long.
fn wait_listening(child: &mut Child, addr: SocketAddr) -> anyhow::Result<()> {
    let started = Instant::now();
    loop {
        if TcpStream::connect_timeout(&addr, POLL).is_ok() {
            return Ok(());
        }
        if let Some(status) = child.try_wait()? {
            bail!("the server exited ({status}) before listening on {addr}");
        }
        if started.elapsed() > START {
            bail!("the server did not listen on {addr} within {START:?}");
        }
        std::thread::sleep(POLL);
    }
}

/// SIGTERM, then wait (SIGKILL after [`STOP`]); how it ended.
fn stop(child: &mut Child) -> String {
    // SAFETY: kill(2) on our own child's pid, which has not been reaped
    // (try_wait has not seen it exit), so the pid is still ours.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    if let Some(status) = serverlab_util::child::wait_within(child, STOP) {
        return status.to_string();
    }
    let _ = child.kill();
    child
        .wait()
        .map_or_else(|e| e.to_string(), |s| format!("killed after {STOP:?}: {s}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one list ([`Served::OWN_SERVER_FLAGS`], which a sweep reads
    /// too) names `serve`'s own flags, each taking a value as it says.
    #[test]
    fn each_flag_refused_is_serves_and_takes_a_value_as_listed() {
        let cli = <crate::Cli as clap::CommandFactory>::command();
        let external = cli
            .find_subcommand("serve")
            .and_then(|s| s.find_subcommand(Served::EXTERNAL))
            .expect("serve external");
        for own in Served::OWN_SERVER_FLAGS {
            let arg = external
                .get_arguments()
                .find(|a| a.get_id().as_str() == own.id())
                .unwrap_or_else(|| panic!("{}: no such flag of serve", own.flag));
            assert_eq!(
                arg.get_long().map(|l| format!("--{l}")),
                Some(own.flag.into())
            );
            assert_eq!(
                arg.get_action().takes_values(),
                own.takes_value,
                "{}",
                own.flag
            );
        }
    }
}
