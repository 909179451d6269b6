//! The two child processes of a run: a server that announces where it
//! listens and stops on SIGTERM, and a load that runs to completion.
//! Both die with the sweep (parent-death signal), the load optionally
//! pinned to the client CPUs.

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serverlab_util::CpuSet;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const POLL: Duration = Duration::from_millis(20);

/// Why a child did not run as it should; a run records it as its error.
#[derive(Debug, thiserror::Error)]
pub enum ChildError {
    #[error("cannot open {}: {source}", path.display())]
    Log {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start {what} ({}): {source}", exe.display())]
    Spawn {
        what: &'static str,
        exe: PathBuf,
        source: std::io::Error,
    },
    #[error("the server did not listen within {timeout:?}: {log_tail}")]
    NotListening { timeout: Duration, log_tail: String },
    #[error("the server exited ({status}) before listening: {log_tail}")]
    ExitedEarly { status: String, log_tail: String },
    #[error("the server did not stop within {timeout:?} of SIGTERM")]
    DidNotStop { timeout: Duration },
}

fn log_err(path: &Path) -> impl FnOnce(std::io::Error) -> ChildError + '_ {
    move |source| ChildError::Log {
        path: path.to_path_buf(),
        source,
    }
}

fn spawn_err<'a>(
    what: &'static str,
    exe: &'a Path,
) -> impl FnOnce(std::io::Error) -> ChildError + 'a {
    move |source| ChildError::Spawn {
        what,
        exe: exe.to_path_buf(),
        source,
    }
}

/// A command for `exe args…` that gets SIGTERM if the sweep dies, and is
/// pinned to `pin` if given.
fn command(exe: &Path, args: &[String], pin: Option<&CpuSet>) -> Command {
    let mut cmd = Command::new(exe);
    cmd.args(args).stdin(Stdio::null());
    // Built before the fork: the child must not allocate.
    // A CpuSet's CPUs were checked against those this process may use
    // when it was parsed, so the conversion cannot fail.
    let mask = pin.and_then(|cpus| cpus.to_nix().ok());
    // SAFETY: the closure runs in the forked child before exec. It makes
    // only async-signal-safe system calls (prctl, sched_setaffinity) on data
    // prepared before the fork, and allocates nothing. The parent-death
    // signal is tied to the thread that spawns: the runner spawns from the
    // thread that lives for the whole sweep.
    unsafe {
        cmd.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGTERM).map_err(std::io::Error::from)?;
            if let Some(set) = &mask {
                nix::sched::sched_setaffinity(Pid::from_raw(0), set)
                    .map_err(std::io::Error::from)?;
            }
            Ok(())
        });
    }
    cmd
}

/// The last `n` non-empty lines of a log, for error messages.
pub fn tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

/// A running server.
pub struct Server {
    child: Child,
    /// As it announced it: `HOST:PORT`, or `unix:PATH`.
    pub addr: String,
    reader: Option<JoinHandle<()>>,
}

impl Server {
    /// Start it; return once it prints `listening on ADDR`. Its stdout and
    /// stderr go to `log`.
    pub fn start(
        exe: &Path,
        args: &[String],
        log: &Path,
        timeout: Duration,
    ) -> Result<Server, ChildError> {
        let file = File::create(log).map_err(log_err(log))?;
        let err_file = file.try_clone().map_err(log_err(log))?;
        let mut child = command(exe, args, None)
            .stdout(Stdio::piped())
            .stderr(Stdio::from(err_file))
            .spawn()
            .map_err(spawn_err("the server", exe))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, rx) = mpsc::channel();
        let reader = std::thread::spawn(move || copy_announcing(stdout, file, tx));
        let mut server = Server {
            child,
            addr: String::new(),
            reader: Some(reader),
        };
        match rx.recv_timeout(timeout) {
            Ok(addr) => {
                server.addr = addr;
                Ok(server)
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                server.kill();
                Err(ChildError::NotListening {
                    timeout,
                    log_tail: tail(log, 3),
                })
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let status = server.kill();
                Err(ChildError::ExitedEarly {
                    status: describe(status),
                    log_tail: tail(log, 3),
                })
            }
        }
    }

    /// SIGTERM, then wait up to `timeout` for a graceful exit (SIGKILL after).
    pub fn stop(mut self, timeout: Duration) -> Result<ExitStatus, ChildError> {
        let _ = kill(Pid::from_raw(self.child.id() as i32), Signal::SIGTERM);
        let status = wait_until(&mut self.child, Instant::now() + timeout, None);
        let result = match status {
            Some(s) => Ok(s),
            None => {
                self.kill();
                Err(ChildError::DidNotStop { timeout })
            }
        };
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        result
    }

    fn kill(&mut self) -> Option<ExitStatus> {
        let _ = self.child.kill();
        let status = self.child.wait().ok();
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        status
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.reader.is_some() {
            self.kill();
        }
    }
}

/// Copy the server's stdout to its log, sending the address from the first
/// `listening on ADDR` line (a TCP address, or `unix:PATH`).
fn copy_announcing(stdout: std::process::ChildStdout, mut log: File, tx: mpsc::Sender<String>) {
    let mut lines = BufReader::new(stdout);
    let mut line = String::new();
    let mut announced = false;
    while lines.read_line(&mut line).unwrap_or(0) > 0 {
        let _ = log.write_all(line.as_bytes());
        if !announced {
            let addr = line
                .split("listening on ")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .filter(|a| a.starts_with("unix:") || a.parse::<SocketAddr>().is_ok())
                .map(str::to_string);
            if let Some(addr) = addr {
                let _ = tx.send(addr);
                announced = true;
            }
        }
        line.clear();
    }
}

/// How a load ended.
#[derive(Debug)]
pub enum LoadEnd {
    Exited(ExitStatus),
    TimedOut(Duration),
    Interrupted,
}

/// Where a load's output goes.
pub struct LoadFiles {
    pub stdout: PathBuf,
    pub stderr: PathBuf,
}

/// Run the load to completion, pinned to `pin`; stop it on `timeout` or
/// when `interrupted` is set.
pub fn run_load(
    exe: &Path,
    args: &[String],
    files: &LoadFiles,
    pin: Option<&CpuSet>,
    timeout: Duration,
    interrupted: &AtomicBool,
) -> Result<LoadEnd, ChildError> {
    let create = |p: &Path| File::create(p).map_err(log_err(p));
    let mut child = command(exe, args, pin)
        .stdout(Stdio::from(create(&files.stdout)?))
        .stderr(Stdio::from(create(&files.stderr)?))
        .spawn()
        .map_err(spawn_err("the load", exe))?;
    let status = wait_until(&mut child, Instant::now() + timeout, Some(interrupted));
    Ok(match status {
        Some(s) => LoadEnd::Exited(s),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            if interrupted.load(Ordering::Relaxed) {
                LoadEnd::Interrupted
            } else {
                LoadEnd::TimedOut(timeout)
            }
        }
    })
}

/// Wait for `child` until `deadline` (or until `stop` is set).
fn wait_until(
    child: &mut Child,
    deadline: Instant,
    stop: Option<&AtomicBool>,
) -> Option<ExitStatus> {
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        // Relaxed: a flag polled in a loop, ordered with nothing else.
        if Instant::now() >= deadline || stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            return None;
        }
        std::thread::sleep(POLL);
    }
}

/// `exit 0`, `exit 1`, `killed by SIGKILL`.
pub fn describe(status: Option<ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        None => "unknown status".into(),
        Some(s) => match (s.code(), s.signal()) {
            (Some(c), _) => format!("exit {c}"),
            (None, Some(sig)) => match Signal::try_from(sig) {
                Ok(sig) => format!("killed by {sig}"),
                Err(_) => format!("killed by signal {sig}"),
            },
            _ => "unknown status".into(),
        },
    }
}
