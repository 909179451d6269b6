//! The simulated world a service runs in, for any protocol ([`Proto`]).
//!
//! **The world.** One server (`real`): the service logging under
//! `always` into a `Wal` on a `SimFs`, its log committed only when the
//! run says (`Committer::Caller`). Four clients, each a connection the run
//! steps one request at a time; a client whose reply waits for a commit
//! (the service's `logged`) is held until it comes, as a server holds a
//! reply. And a model (`model`): the same service with no log, which
//! holds exactly what the log has committed: the requests of an
//! interval between two commits reach it (in the order the server took
//! them, at the same simulated times) only when the commit that ends the
//! interval succeeds.
//!
//! **The steps**, random by the seed: a client's next request (or a
//! blocked pop's next look), the clock moved, a commit; a commit may
//! meet an injected failure (`EIO` on the `fdatasync`, `ENOSPC` on the
//! write, or the `fail_syncs_after` layer under the whole life), or a
//! power loss at one of its next calls; a power loss may also come
//! between steps. A failure or a power loss ends the server's life: it
//! is restarted (after a power loss, or the machine's restart, or
//! neither) on the same disk, replaying its log into the new server and
//! a new model alike.
//!
//! **The properties.**
//! - A commit that succeeds: every reply the server made in the
//!   interval equals the model's to the same request; the store equals
//!   the model's ([`Proto::dump`]: every key, value and deadline).
//! - A failure or a power loss: no reply sent in the interval showed what
//!   was lost: none acknowledged a write (a request that appended a
//!   record), and each other equals the model's answer, the model
//!   holding only what was committed. After a failed `fsync` the store
//!   is the committed one at once (refused writes bring back nothing),
//!   and a few more requests are either refused or answered as the
//!   committed state says.
//! - After the restart, the store replayed from the log is the committed
//!   one: every deadline at the same absolute moment, though the clock
//!   has moved.

use serverlab_service::sim;
use serverlab_service::wal::vfs::fault;
use serverlab_service::wal::vfs::sim::{At, Call, Fault, SimFs, EIO, ENOSPC};
use serverlab_service::wal::{ApplyError, Committer, Durability, Options, Wal};
use serverlab_service::{Frame, Logged, Service};
use std::collections::VecDeque;
use std::net::SocketAddr;

const DIR: &str = "/data";
/// The simulated clock starts here (2096), past any machine's clock: a
/// timer that escaped the simulation (on the machine's clock) would find
/// no simulated deadline due.
const START: i64 = 4_000_000_000_000;
const CLIENTS: usize = 4;
const STEPS: usize = 300;

pub fn peer() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 1))
}

/// A request: its bytes and how the trace shows it.
pub struct Request {
    pub wire: Vec<u8>,
    pub text: String,
}

/// A protocol the world runs: its service, its requests, and how its
/// store and replies are compared.
pub trait Proto {
    type Svc: Service;
    /// A service with no log, of the run's store.
    fn service(&self) -> Self::Svc;
    fn replay(svc: &Self::Svc, record: &[u8]) -> Result<(), ApplyError>;
    fn with_log(svc: Self::Svc, wal: Wal) -> Self::Svc;
    /// A service with no log, its replay done.
    fn replayed(svc: Self::Svc) -> Self::Svc;
    /// A client's next requests (several: a transaction's); `single`:
    /// one that neither blocks nor opens a transaction.
    fn next(&self, rng: &mut fastrand::Rng, now: i64, single: bool) -> Vec<Request>;
    /// The whole store, but the keys whose deadline is at or before `t`,
    /// read without expiring anything.
    fn dump(svc: &Self::Svc, t: i64) -> String;
    /// A reply as compared (without what differs by the machine, such as
    /// a `Date`).
    fn normalize(reply: Vec<u8>) -> Vec<u8> {
        reply
    }
    /// Whether a reply is the refusal of a write by a failed log.
    fn refused(reply: &[u8]) -> bool;
    /// One pass of the service's background expiry, if it has one.
    fn expire(_svc: &Self::Svc) {}
}

/// One side of a client: its connection to a service, and the blocking
/// pop it waits on, if any.
struct Peer<S: Service> {
    conn: S::Conn,
    blocked: Option<(S::Request, Vec<u8>)>,
}

impl<S: Service> Peer<S> {
    fn new(svc: &S) -> Peer<S> {
        Peer {
            conn: svc.open(peer()),
            blocked: None,
        }
    }
}

#[derive(Debug, Clone)]
enum Act {
    /// A request's bytes.
    Send(Vec<u8>),
    /// A blocked pop looks again.
    Poll,
    /// The service's background expiry runs once.
    Expire,
}

/// One client of both the server and the model.
struct Client<S: Service> {
    real: Peer<S>,
    model: Peer<S>,
    /// Its last reply waits for a commit.
    held: bool,
    /// The rest of a transaction it is sending.
    queue: VecDeque<Request>,
}

/// A step of a client, as the server took it.
struct Action {
    client: usize,
    act: Act,
    at: i64,
    text: String,
    /// The server's reply (`None`: the pop blocked).
    reply: Option<Vec<u8>>,
    /// The step appended a record to the log.
    appended: bool,
    /// The reply was sent at once (it waited for nothing uncommitted).
    sent: bool,
}

/// `act` on `svc` through `p`: the reply and what it waits for; `None`
/// while the pop blocks.
fn act_on<P: Proto>(
    svc: &P::Svc,
    p: &mut Peer<P::Svc>,
    act: &Act,
) -> Option<(Vec<u8>, Option<Logged>)> {
    let (req, wire) = match act {
        Act::Send(wire) => {
            let mut out = Vec::new();
            match svc.frame(&mut p.conn, wire, &mut out) {
                Frame::Ready { request, .. } => (request, wire.clone()),
                _ => return Some((out, None)),
            }
        }
        Act::Poll => match p.blocked.take() {
            Some(b) => b,
            None => return Some((b"<not blocked>".to_vec(), None)),
        },
        Act::Expire => {
            P::expire(svc);
            return None;
        }
    };
    if svc.wait(&mut p.conn, &req, &wire, None).is_some() {
        p.blocked = Some((req, wire));
        return None;
    }
    let mut out = Vec::new();
    svc.apply(&mut p.conn, req, &wire, &mut out);
    while svc.more(&mut p.conn, &mut out) {}
    Some((P::normalize(out), svc.logged(&mut p.conn)))
}

/// The lines where two dumps differ.
fn diff(want: &str, got: &str) -> String {
    let w: Vec<&str> = want.lines().collect();
    let g: Vec<&str> = got.lines().collect();
    let mut d = String::new();
    for l in &w {
        if !g.contains(l) {
            d += &format!("  want {l}\n");
        }
    }
    for l in &g {
        if !w.contains(l) {
            d += &format!("  got  {l}\n");
        }
    }
    d
}

fn show_reply(r: &Option<Vec<u8>>) -> String {
    match r {
        None => "(blocked)".into(),
        Some(b) => {
            let s = String::from_utf8_lossy(b).replace("\r\n", " ");
            s.chars().take(120).collect()
        }
    }
}

struct World<P: Proto> {
    proto: P,
    seed: u64,
    rng: fastrand::Rng,
    verbose: bool,
    sim: SimFs,
    now: i64,
    real: P::Svc,
    model: P::Svc,
    clients: Vec<Client<P::Svc>>,
    interval: Vec<Action>,
    /// The model's dump at the last commit (or restart), and when.
    committed: String,
    committed_at: i64,
    /// How often (of 100 steps) this life commits: a slow disk, or a
    /// committer held back, leaves more writes waiting.
    commit_pct: u8,
    /// This life's log fails by the `fail_syncs_after` layer, whose
    /// failure leaves the page cache as it was: the life ends with a
    /// power loss.
    layered: bool,
    trace: Vec<String>,
}

/// A run of `STEPS` steps of `proto` from `seed`.
pub fn run<P: Proto>(proto: P, seed: u64, verbose: bool) -> Result<(), String> {
    let mut w = World::new(proto, seed, verbose)?;
    let done = (0..STEPS).try_for_each(|_| w.step());
    sim::set_clock(None);
    done.map_err(|why| w.explain(&why))?;
    if verbose {
        println!("seed {seed}: {STEPS} steps kept every property");
    }
    Ok(())
}

impl<P: Proto> World<P> {
    fn new(proto: P, seed: u64, verbose: bool) -> Result<World<P>, String> {
        let mut w = World {
            real: proto.service(),
            model: proto.service(),
            proto,
            seed,
            rng: fastrand::Rng::with_seed(seed),
            verbose,
            sim: SimFs::new(seed),
            now: START,
            clients: Vec::new(),
            interval: Vec::new(),
            committed: String::new(),
            committed_at: START,
            layered: false,
            commit_pct: 18,
            trace: Vec::new(),
        };
        w.note(format!("seed {seed}"));
        w.open()?;
        w.committed = P::dump(&w.model, w.now);
        Ok(w)
    }

    fn note(&mut self, line: String) {
        if self.verbose {
            println!("{line}");
        }
        self.trace.push(line);
    }

    /// `why`, with the run's last steps.
    fn explain(&self, why: &str) -> String {
        let from = self.trace.len().saturating_sub(40);
        format!(
            "seed {}: {why}\nlast steps:\n{}",
            self.seed,
            self.trace[from..].join("\n")
        )
    }

    /// Opens the server on the disk, replaying its log into it and into a
    /// new model; new clients.
    fn open(&mut self) -> Result<(), String> {
        sim::set_clock(Some(self.now));
        let mut opts = Options::new(Durability::Always);
        opts.committer = Committer::Caller;
        self.layered = self.rng.u8(..5) == 0;
        self.commit_pct = [6, 12, 18, 25][self.rng.usize(..4)];
        self.note(format!(
            "  (this life commits at {}% of steps)",
            self.commit_pct
        ));
        let mut fs = self.sim.shared();
        if self.layered {
            let n = self.rng.u64(1..20);
            self.note(format!("  (this life's syncs fail after {n})"));
            fs = fault::fail_syncs_after(fs, n);
        }
        opts.fs = fs;
        let real = self.proto.service();
        let model = self.proto.service();
        let verbose = self.verbose;
        let wal = Wal::open(DIR, opts, |rec| {
            if verbose {
                let text = String::from_utf8_lossy(rec).replace("\r\n", " ");
                println!("  replay {}", text.chars().take(200).collect::<String>());
            }
            P::replay(&real, rec)?;
            P::replay(&model, rec)
        })
        .map_err(|e| format!("the log does not open: {e}"))?;
        self.real = P::with_log(real, wal);
        self.model = P::replayed(model);
        self.clients = (0..CLIENTS)
            .map(|_| Client {
                real: Peer::new(&self.real),
                model: Peer::new(&self.model),
                held: false,
                queue: VecDeque::new(),
            })
            .collect();
        self.interval.clear();
        Ok(())
    }

    fn step(&mut self) -> Result<(), String> {
        let roll = self.rng.u8(..100);
        let commit = self.commit_pct;
        if roll < commit {
            return self.commit();
        }
        match roll - commit {
            0 | 1 => {
                self.note("power loss".into());
                self.sim.power_loss();
                self.lost()
            }
            2..=8 => {
                let by = self.rng.i64(1..400);
                self.now += by;
                self.note(format!("clock +{by}ms"));
                Ok(())
            }
            9..=11 => {
                self.on_real(0, Act::Expire, "(the expirer's pass)".into());
                Ok(())
            }
            _ => self.client_step(),
        }
    }

    /// A client that may act: not held; a blocked one looks again.
    fn client_step(&mut self) -> Result<(), String> {
        let free: Vec<usize> = (0..CLIENTS).filter(|&c| !self.clients[c].held).collect();
        if free.is_empty() {
            return self.commit();
        }
        let c = free[self.rng.usize(..free.len())];
        let (act, text) = if self.clients[c].real.blocked.is_some() {
            (Act::Poll, "(looks again)".to_string())
        } else {
            let r = self.next_request(c, false);
            (Act::Send(r.wire), r.text)
        };
        self.on_real(c, act, text);
        Ok(())
    }

    /// Client `c`'s next request: the rest of its transaction, or new
    /// (`single`: no transaction nor blocking pop).
    fn next_request(&mut self, c: usize, single: bool) -> Request {
        if let Some(r) = self.clients[c].queue.pop_front() {
            return r;
        }
        let mut all = self.proto.next(&mut self.rng, self.now, single);
        let first = all.remove(0);
        self.clients[c].queue.extend(all);
        first
    }

    /// Client `c` acts on the server, now; noted in the interval.
    fn on_real(&mut self, c: usize, act: Act, text: String) -> Option<Vec<u8>> {
        sim::set_clock(Some(self.now));
        let wal = self.real.wal().expect("a log");
        let before = wal.last_appended().lsn();
        let got = act_on::<P>(&self.real, &mut self.clients[c].real, &act);
        let appended = wal.last_appended().lsn() > before;
        let (reply, sent) = match got {
            None => (None, false),
            Some((out, logged)) => {
                let sent = logged.is_none_or(|Logged::Ticket(t)| wal.is_committed(t));
                (Some(out), sent)
            }
        };
        if reply.is_some() && !sent {
            self.clients[c].held = true;
        }
        let held = if reply.is_some() && !sent {
            " (held)"
        } else {
            ""
        };
        self.note(format!("c{c} {text} -> {}{held}", show_reply(&reply)));
        self.interval.push(Action {
            client: c,
            act,
            at: self.now,
            text,
            reply: reply.clone(),
            appended,
            sent,
        });
        reply
    }

    /// Commits what is pending, perhaps meeting an injected fault.
    fn commit(&mut self) -> Result<(), String> {
        self.inject();
        self.real.wal().expect("a log").commit_pending();
        self.sim.clear_faults();
        if self.sim.is_off() {
            return self.lost();
        }
        if let Some(f) = self.real.wal().expect("a log").failure() {
            self.note(format!("commit failed: {f}"));
            return self.failed();
        }
        self.note("commit".into());
        self.committed_interval()
    }

    /// Perhaps a fault at the next commit's calls.
    fn inject(&mut self) {
        let syncs = self
            .sim
            .calls_by_kind()
            .get(&Call::SyncData)
            .copied()
            .unwrap_or(0);
        let writes = self
            .sim
            .calls_by_kind()
            .get(&Call::Write)
            .copied()
            .unwrap_or(0);
        match self.rng.u8(..100) {
            0..=7 => {
                self.note("  (the next fdatasync fails)".into());
                self.sim.inject(Fault {
                    at: At::Nth(Call::SyncData, syncs + 1),
                    errno: EIO,
                    torn: true,
                });
            }
            8..=10 => {
                self.note("  (the next write fails)".into());
                self.sim.inject(Fault {
                    at: At::Nth(Call::Write, writes + 1),
                    errno: ENOSPC,
                    torn: false,
                });
            }
            11..=14 => {
                let k = self.rng.u64(1..4);
                self.note(format!("  (power loss at the commit's call {k})"));
                self.sim.crash_at(At::Call(self.sim.calls() + k));
            }
            _ => {}
        }
    }

    /// A commit succeeded: the interval reaches the model, whose replies
    /// must be the server's, and whose store must be.
    fn committed_interval(&mut self) -> Result<(), String> {
        for a in std::mem::take(&mut self.interval) {
            sim::set_clock(Some(a.at));
            let got = act_on::<P>(&self.model, &mut self.clients[a.client].model, &a.act);
            let got = got.map(|(out, _)| out);
            if got != a.reply {
                return Err(format!(
                    "c{} {}: the server answered {}, the committed model {}",
                    a.client,
                    a.text,
                    show_reply(&a.reply),
                    show_reply(&got)
                ));
            }
        }
        self.clients.iter_mut().for_each(|c| c.held = false);
        self.committed = P::dump(&self.model, self.now);
        self.committed_at = self.now;
        let real = P::dump(&self.real, self.now);
        sim::set_clock(Some(self.now));
        if real != self.committed {
            let d = diff(&self.committed, &real);
            return Err(format!("after a commit the store is not the model's:\n{d}"));
        }
        Ok(())
    }

    /// No reply sent in the interval (which is lost) showed what was lost:
    /// none acknowledged a write, and each other is the model's answer.
    fn check_sent(&mut self) -> Result<(), String> {
        for a in std::mem::take(&mut self.interval) {
            if !a.sent {
                // Never sent: it waited for the lost commit. (A pop that
                // blocked sent nothing either: the model, not holding
                // what emptied its lists, might serve it.)
                continue;
            }
            if a.sent && a.appended {
                return Err(format!(
                    "c{} {}: its reply {} was sent, and its record never committed",
                    a.client,
                    a.text,
                    show_reply(&a.reply)
                ));
            }
            sim::set_clock(Some(a.at));
            let got = act_on::<P>(&self.model, &mut self.clients[a.client].model, &a.act);
            let got = got.map(|(out, _)| out);
            if got != a.reply {
                return Err(format!(
                    "c{} {}: the reply sent, {}, is not the committed state's, {}",
                    a.client,
                    a.text,
                    show_reply(&a.reply),
                    show_reply(&got)
                ));
            }
        }
        sim::set_clock(Some(self.now));
        Ok(())
    }

    /// The log failed: what was sent is checked, the store must be the
    /// committed one, a few requests more are refused or answered from
    /// it; then the server restarts.
    fn failed(&mut self) -> Result<(), String> {
        self.check_sent()?;
        for _ in 0..self.rng.usize(0..4) {
            self.after_failure()?;
        }
        let real = P::dump(&self.real, self.committed_at);
        if real != self.committed {
            let d = diff(&self.committed, &real);
            return Err(format!(
                "after the failure the store is not the committed one:\n{d}"
            ));
        }
        if self.layered || self.rng.bool() {
            self.note("power loss".into());
            self.sim.power_loss();
        }
        self.restart()
    }

    /// A request of an idle client after the failure: refused, or a
    /// reply that is the committed state's.
    fn after_failure(&mut self) -> Result<(), String> {
        let idle: Vec<usize> = (0..CLIENTS)
            .filter(|&c| {
                let cl = &self.clients[c];
                !cl.held && cl.real.blocked.is_none() && cl.queue.is_empty()
            })
            .collect();
        if idle.is_empty() {
            return Ok(());
        }
        let c = idle[self.rng.usize(..idle.len())];
        let r = self.next_request(c, true);
        let act = Act::Send(r.wire);
        let reply = self.on_real(c, act.clone(), r.text);
        let a = self.interval.pop().expect("noted");
        if !a.sent {
            return Ok(()); // it waits for a commit that never comes
        }
        if a.appended {
            return Err(format!("{}: appended to a failed log", a.text));
        }
        if reply.as_deref().is_some_and(P::refused) {
            return Ok(());
        }
        sim::set_clock(Some(self.now));
        let got = act_on::<P>(&self.model, &mut self.clients[c].model, &act).map(|(o, _)| o);
        if got != reply {
            return Err(format!(
                "c{c} {} after the failure: the server answered {}, the committed state {}",
                a.text,
                show_reply(&reply),
                show_reply(&got)
            ));
        }
        Ok(())
    }

    /// The power was lost: what was sent is checked, then the server
    /// restarts.
    fn lost(&mut self) -> Result<(), String> {
        self.note("  (the power is off)".into());
        self.check_sent()?;
        self.restart()
    }

    /// The server restarts on the disk (powered on, if it was off), some
    /// time later: the store replayed must be the committed one.
    fn restart(&mut self) -> Result<(), String> {
        // The old server goes first: it holds the directory's lock.
        self.real = self.proto.service();
        self.sim.power_on();
        let by = self.rng.i64(0..3000);
        self.now += by;
        self.note(format!("restart, {by}ms later"));
        self.open()?;
        let real = P::dump(&self.real, self.committed_at);
        if real != self.committed {
            let d = diff(&self.committed, &real);
            return Err(format!("the store replayed is not the committed one:\n{d}"));
        }
        self.committed = P::dump(&self.model, self.now);
        self.committed_at = self.now;
        sim::set_clock(Some(self.now));
        Ok(())
    }
}
