//! The RESP service: Redis's protocol (docs/protocols/resp.md, section 5) applied
//! to a [`RespStore`].
//!
//! `frame` frames the next request with the connection's [`Framer`]
//! (resuming where it stopped: a request arriving in pieces is parsed
//! once) and parses it into a [`Cmd`]; the arguments stay spans of the
//! input, kept in the framer until `apply`, which runs the command and
//! encodes its reply straight into the output (a value is copied once,
//! from the store into the output, under the store's lock). A protocol
//! error is answered from `frame` with `-ERR Protocol error: …`, and
//! the connection closes.
//!
//! Commands take one of two paths ([`keyspace`]): the fast path (GET,
//! SET, INCR, MGET, the pushes and pops, LRANGE, …) runs beside every
//! other command on the store's own locks; every other command
//! ([`alone`]: APPEND, LINSERT, EXPIRE, RENAME, SADD, a transaction's EXEC,
//! …) runs alone. Keys with a deadline are in [`expires`]; WATCH in
//! [`watch`]; MULTI/EXEC in [`multi`]; blocking pops in [`blocking`].

mod admin;
mod alone;
mod blocking;
mod clients;
mod expirer;
mod expires;
mod keyspace;
mod monitor;
mod multi;
mod notify;
mod pubsub;
mod replies;
mod snapshot;
mod stats;
mod undo;
mod watch;

use crate::durable::{Refused, Touch};
use crate::{After, Common, Delay, Durable, Frame, Logged, Pushes, Service};
use crossbeam_utils::sync::ShardedLock;
use keyspace::Keyspace;
pub use pubsub::Limits as PubSubLimits;
use serverlab_proto::resp::command::{self, Cmd, ConnCmd, ListCmd, Rejection, ServerCmd, StrCmd};
use serverlab_proto::resp::frame::{Framed, ProtocolError};
use serverlab_proto::resp::name::Flags;
use serverlab_proto::resp::{reply, Framer, Limits, Span};
use serverlab_store::resp::{IncrError, RespStore, WrongType};
use serverlab_store::StoreKind;
use serverlab_wal::{ApplyError, Wal};
use stats::RespCounters;
pub use stats::{PubSubStats, RespErrors, RespRequests, RespStats};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

pub struct RespService {
    /// The databases, behind the gate that lets a command run alone.
    keyspace: Arc<ShardedLock<Keyspace>>,
    limits: Limits,
    stats: RespCounters,
    common: Common,
    /// CLIENT ID's source. Relaxed: it only hands out distinct numbers.
    next_id: AtomicU64,
    /// What INFO says about the server (`store mutex`, …).
    about: String,
    /// The write-ahead log (`--durability` other than `none`); shared
    /// with the active expirer, which logs its deletions.
    log: Option<Arc<Durable>>,
    /// Under `always`: the writes not yet committed, with their undos.
    in_flight: Arc<undo::InFlight>,
    watches: watch::Watches,
    /// Blocked connections, for INFO and CLIENT UNBLOCK.
    blocked: blocking::Blocked,
    /// Counts writes that may have put elements in a list: a blocked pop
    /// looks at its keys again only once it has moved.
    pushes: AtomicU64,
    /// The active expirer, started by the first deadline set.
    expirer: std::sync::Once,
    /// The log is being replayed: no key expires meanwhile (a deadline
    /// that passed is kept until the replay is done, as Redis loads its
    /// AOF), since a later record may have saved the key.
    replaying: Arc<AtomicBool>,
    /// The log, for the active expirer (set with the log, after the
    /// replay): its deletions are then logged as `DEL`s.
    expiry_log: Arc<std::sync::OnceLock<std::sync::Weak<Durable>>>,
    /// CONFIG SET's parameters, as set.
    config: parking_lot::Mutex<Vec<(String, String)>>,
    /// Publish/subscribe: who is subscribed to what, and the limits;
    /// MONITOR's connections.
    pubsub: Arc<pubsub::PubSub>,
    /// The open connections, for CLIENT LIST.
    clients: clients::Clients,
}

/// The flags of a `notify-keyspace-events` value, Redis's letters
/// (docs/protocols/resp.md, 5.2.6), or why not.
pub fn keyspace_events(text: &str) -> Result<u32, String> {
    notify::parse(text.as_bytes()).ok_or_else(|| notify::INVALID.to_string())
}

/// Per connection: its framing state, its name, its database and its
/// transaction.
pub struct RespConn {
    framer: Framer,
    id: u64,
    name: Option<Box<[u8]>>,
    /// What the writes applied since the session last asked came to.
    logged: Option<Logged>,
    /// SELECT's database.
    db: usize,
    /// MULTI's queue, while one is open.
    multi: Option<multi::Queued>,
    /// WATCH's keys and the flag a write to any of them sets.
    watching: multi::Watching,
    /// A blocked pop's state, while it waits.
    block: Option<blocking::Waiting>,
    /// A blocked pop's reply, made when it could be served.
    ready: Option<Vec<u8>>,
    /// Its subscriptions, and the messages published to it not yet taken.
    subs: pubsub::Subs,
    /// CLIENT REPLY's state.
    replies: replies::Replies,
    /// What CLIENT LIST shows of it.
    client: Arc<clients::Client>,
}

/// A framed request: the command, its arguments being the framer's.
/// Only [`RespService`]'s `frame` builds one.
#[derive(Debug)]
pub struct RespRequest(Req);

#[derive(Debug)]
enum Req {
    /// `*0`, `*-1` or a blank inline line: nothing to answer.
    Nothing,
    Cmd(Cmd),
}

impl RespService {
    /// A server whose sixteen databases are stores of the locking scheme
    /// `kind`; `None` for a scheme RESP's store does not offer. `about`
    /// is shown in INFO's `# Server` (the store, the strategy).
    pub fn new(kind: StoreKind, limits: Limits, about: String) -> Option<Self> {
        Some(RespService {
            keyspace: Arc::new(ShardedLock::new(Keyspace::new(kind)?)),
            limits,
            stats: RespCounters::default(),
            common: Common::default(),
            next_id: AtomicU64::new(1),
            about,
            log: None,
            in_flight: Default::default(),
            watches: Default::default(),
            blocked: Default::default(),
            pushes: AtomicU64::new(0),
            expirer: std::sync::Once::new(),
            replaying: Arc::default(),
            expiry_log: Arc::default(),
            config: Default::default(),
            pubsub: Default::default(),
            clients: Default::default(),
        })
    }

    /// Bounds each subscriber's messages not yet taken (by default
    /// Redis's `client-output-buffer-limit pubsub 32mb 8mb 60`).
    pub fn with_pubsub_limits(mut self, limits: PubSubLimits) -> Self {
        Arc::get_mut(&mut self.pubsub)
            .expect("set before the service is shared")
            .limits = limits;
        self
    }

    /// Keyspace notifications from the start (`notify-keyspace-events`,
    /// as Redis's configuration file sets it): flags from
    /// [`keyspace_events`].
    pub fn with_keyspace_events(self, flags: u32) -> Self {
        self.pubsub.set_events(flags);
        self
    }

    /// RESET: the connection as a new one is (but its id): no
    /// transaction, watches, subscriptions or name, database 0.
    fn reset(&self, conn: &mut RespConn) {
        conn.multi = None;
        multi::unwatch(self, &conn.watching);
        conn.watching = Default::default();
        self.pubsub.forget(conn.id, &mut conn.subs);
        conn.db = 0;
        conn.name = None;
        conn.client.set_name(None);
    }

    /// In subscribe mode, a command but the pub/sub ones, PING, QUIT and
    /// RESET is refused (after the checks of its name and arity), as
    /// Redis refuses it over RESP2; PING answers `pong` as a message.
    /// Its own argument checks come after (Redis makes them as it runs
    /// the command): `HELLO 3` or `SET k v NX XX` there is refused for
    /// the mode, not for its arguments. `Some`: answered here.
    fn subscribed(
        &self,
        conn: &RespConn,
        cmd: &Cmd,
        input: &[u8],
        out: &mut Vec<u8>,
    ) -> Option<()> {
        let before_mode = matches!(
            cmd,
            Cmd::Reject(
                Rejection::UnknownCommand
                    | Rejection::UnknownSubcommand(_)
                    | Rejection::WrongArity(_)
            )
        );
        if !conn.subs.active() || before_mode {
            return None;
        }
        let a = Args {
            framer: &conn.framer,
            input,
        };
        let name = serverlab_proto::resp::Name::find(a.arg(0))?;
        if let Cmd::Server(ServerCmd::Ping(m)) = cmd {
            pubsub::pong(&a, *m, out);
            return Some(());
        }
        if pubsub::allowed(name) {
            return None;
        }
        let exec = name == serverlab_proto::resp::Name::Exec;
        pubsub::refused(&pubsub::full_name(name, &a), exec, out);
        Some(())
    }

    /// Applies one record of a log being replayed (see
    /// [`Wal::open`](serverlab_wal::Wal::open)): a record is one or more
    /// commands as they were applied (a transaction's, or a command
    /// after a `SELECT`), run again (uncounted) in log order.
    pub fn replay(&self, record: &[u8]) -> Result<(), ApplyError> {
        self.replaying.store(true, Ordering::Release);
        let mut conn = self.open(SocketAddr::from(([0, 0, 0, 0], 0)));
        // Not a client: CLIENT LIST does not show it.
        self.clients.close(conn.id);
        let mut out = Vec::new();
        let mut at = 0;
        while at < record.len() {
            let input = &record[at..];
            match self.frame(&mut conn, input, &mut out) {
                Frame::Ready {
                    len,
                    request: RespRequest(Req::Cmd(cmd)),
                } => {
                    self.run(&mut conn, cmd, &input[..len], &mut out);
                    at += len;
                }
                _ => return Err("not a RESP command".into()),
            }
            out.clear();
        }
        if at == 0 {
            return Err("an empty record".into());
        }
        Ok(())
    }

    /// Starts the active expirer (once): a thread that deletes, every
    /// [`expires::ACTIVE_EVERY`], the keys whose deadline has passed, and
    /// ends with the service. Nothing expires while the log replays; once
    /// the server keeps a log, a deletion is a write to log: the expirer
    /// then deletes alone, logged as `DEL`s in one record, in the log's
    /// order with every other write ([`expirer::expire_due`]), as every
    /// command alone first does, and a fast-path command that meets such
    /// a key runs alone.
    fn start_expirer(&self) {
        if crate::sim::clock().is_some() {
            // The simulation's clock is its thread's: it runs the passes
            // itself ([`Self::expire_pass`]), at steps of its choosing.
            return;
        }
        self.expirer.call_once(|| {
            let ks = Arc::downgrade(&self.keyspace);
            let replaying = Arc::clone(&self.replaying);
            let logged = Arc::clone(&self.expiry_log);
            let max_args = self.limits.max_args;
            let in_flight = Arc::clone(&self.in_flight);
            let pubsub = Arc::clone(&self.pubsub);
            let spawned = std::thread::Builder::new()
                .name("resp-expirer".into())
                .spawn(move || loop {
                    std::thread::sleep(expires::ACTIVE_EVERY);
                    let Some(ks) = ks.upgrade() else { return };
                    if replaying.load(Ordering::Acquire) {
                        continue;
                    }
                    match logged.get().map(std::sync::Weak::upgrade) {
                        Some(Some(l)) => {
                            expirer::expire_due(&ks, &l, &in_flight, max_args, &pubsub)
                        }
                        Some(None) => return,
                        None => {
                            let ks = ks.read().unwrap_or_else(|e| e.into_inner());
                            ks.expire_due(expires::now_ms(), &pubsub);
                        }
                    }
                });
            if let Err(e) = spawned {
                eprintln!(
                    "serverlab: the active expirer was not started ({e}): keys expire when touched"
                );
            }
        });
    }

    /// One pass of the active expirer, in the calling thread: what the
    /// simulation runs as a step, on its clock.
    #[cfg(feature = "sim")]
    pub fn expire_pass(&self) {
        match &self.log {
            Some(l) => expirer::expire_due(
                &self.keyspace,
                l,
                &self.in_flight,
                self.limits.max_args,
                &self.pubsub,
            ),
            None => {
                let ks = self.keyspace.read().unwrap_or_else(|e| e.into_inner());
                ks.expire_due(expires::now_ms(), &self.pubsub);
            }
        }
    }

    /// Whether the log is being replayed (no key expires meanwhile).
    pub(crate) fn replaying(&self) -> bool {
        self.replaying.load(Ordering::Acquire)
    }

    /// Ends a replay into a service that keeps no log (the simulation's
    /// model of what a log holds, replayed beside the server): keys
    /// expire again.
    pub fn replayed(self) -> Self {
        self.replaying.store(false, Ordering::Release);
        self
    }

    /// Logs every command that changes data from now on into `wal`,
    /// opened (and replayed into this service) by the caller.
    pub fn with_log(mut self, wal: Wal) -> Self {
        let log = Arc::new(Durable::new(wal));
        // Before the replay is declared done: the expirer never deletes
        // unlogged under a log.
        let _ = self.expiry_log.set(Arc::downgrade(&log));
        self.log = Some(log);
        self.replaying.store(false, Ordering::Release);
        self
    }

    fn protocol_error(&self, e: ProtocolError, out: &mut Vec<u8>) {
        self.stats.protocol_error(e);
        reply::error(out, format!("ERR {}", e.message()).as_bytes());
    }

    fn reject(&self, r: Rejection, conn: &RespConn, input: &[u8], out: &mut Vec<u8>) {
        self.stats.rejected(r);
        let arg = |i: usize| conn.framer.arg(input, i);
        let msg = match r {
            Rejection::UnknownCommand => unknown_command(&conn.framer, input),
            Rejection::UnknownSubcommand(cmd) => format!(
                "ERR unknown subcommand '{}'. Try {cmd} HELP.",
                c_str(arg(1), 128)
            ),
            Rejection::WrongArity(name) => reply::wrong_arity(name),
            Rejection::Syntax => reply::SYNTAX.into(),
            Rejection::NotInteger => return reply::error(out, reply::NOT_INTEGER),
            Rejection::NotPositive => reply::NOT_POSITIVE.into(),
            Rejection::DbIndex => reply::DB_INDEX.into(),
            Rejection::DecrementOverflow => "ERR decrement would overflow".into(),
            Rejection::BadClientName => {
                "ERR Client names cannot contain spaces, newlines or special characters.".into()
            }
            Rejection::UnknownSetInfo => {
                format!("ERR Unrecognized option '{}'", c_str(arg(2), 128))
            }
            Rejection::HelloVersion => {
                "ERR Protocol version is not an integer or out of range".into()
            }
            Rejection::NoProto => "NOPROTO unsupported protocol version".into(),
            Rejection::HelloOption { at } => {
                format!("ERR Syntax error in HELLO option '{}'", c_str(arg(at), 128))
            }
        };
        reply::error(out, msg.as_bytes());
    }

    /// Whether a command about to run is shown to the monitors (see
    /// [`monitor`]): not refused before it runs, not queued, not
    /// administrative.
    fn fed(
        &self,
        conn: &RespConn,
        cmd: &Cmd,
        name: Option<serverlab_proto::resp::Name>,
        a: &Args,
    ) -> bool {
        if monitor::refused_early(cmd) || !monitor::shown(name, a) {
            return false;
        }
        let Some(n) = name else { return false };
        if conn.subs.active() && !pubsub::allowed(n) {
            return false;
        }
        !(conn.multi.is_some() && multi::queues(cmd))
    }

    /// Feeds a command that ran (`input`, framed by the connection's
    /// framer) to the monitors.
    fn feed(&self, conn: &RespConn, input: &[u8]) {
        let a = Args {
            framer: &conn.framer,
            input,
        };
        self.pubsub.feed(&monitor::line(
            conn.db,
            conn.client.addr(),
            conn.client.unix(),
            &a,
        ));
    }

    fn wrongtype(&self, out: &mut Vec<u8>) {
        self.stats.wrongtype();
        reply::error(out, reply::WRONGTYPE);
    }

    /// Run `cmd` and append its reply: queued while a transaction is
    /// open, on the fast path, or alone.
    fn run(&self, conn: &mut RespConn, cmd: Cmd, input: &[u8], out: &mut Vec<u8>) -> After {
        if self.subscribed(conn, &cmd, input, out).is_some() {
            return After::Continue;
        }
        if conn.multi.is_some() {
            if let Some(after) = multi::queue(self, conn, cmd, input, out) {
                return after;
            }
        }
        let a = Args {
            framer: &conn.framer,
            input,
        };
        if replies::is_client_reply(&cmd, &a) {
            replies::client_reply(&mut conn.replies, &a, out);
            return After::Continue;
        }
        match cmd {
            Cmd::Conn(ConnCmd::Reset) => reset(self, conn, out),
            Cmd::Conn(c) => return connection(self, conn, c, input, out, false),
            Cmd::Reject(r) => self.reject(r, conn, input, out),
            Cmd::Ext(name) if multi::is_transaction(name) => {
                multi::run(self, conn, name, input, out)
            }
            Cmd::Ext(name) if pubsub::is_pubsub(name) => {
                return pubsub::run(self, conn, name, input, out)
            }
            Cmd::Ext(_) => alone::run(self, conn, cmd, input, out),
            // While a pop waits, a push runs alone: the waiting pops it
            // makes ready are served at its end (see [`blocking`]).
            Cmd::List(ListCmd::Push { .. }) if self.blocked.len() > 0 => {
                alone::run(self, conn, cmd, input, out)
            }
            _ => self.fast(conn, cmd, input, out),
        }
        After::Continue
    }

    /// A fast-path command, beside every other: a write is logged (as it
    /// arrived) before the store applies it, in the order the store
    /// applies it, and refused once the log has failed; any other's reply
    /// waits for the writes it may have seen (`always`). While keys of
    /// the database have deadlines, the command holds the deadlines of
    /// its keys for its whole step (see [`expires`]).
    fn fast(&self, conn: &mut RespConn, cmd: Cmd, input: &[u8], out: &mut Vec<u8>) {
        self.settle_if_failed();
        let ks = self.keyspace.read().unwrap_or_else(|e| e.into_inner());
        let db = &ks.dbs[conn.db];
        let a = Args {
            framer: &conn.framer,
            input,
        };
        let writes = changes_data(&cmd);
        let notifying = writes && self.pubsub.events() != 0;
        let from = out.len();
        let Some(log) = &self.log else {
            return self.unlogged(&ks, conn.db, cmd, &a, out);
        };
        let keys = fast_keys(&cmd, &a);
        if self.expired_any(db, &cmd, &keys) {
            // Deleting it is a write to log: alone, where it is.
            drop(ks);
            return alone::run(self, conn, cmd, input, out);
        }
        let touch = match cmd {
            _ if all_keys(&cmd) => Touch::Every,
            _ if keys.is_empty() => Touch::Nothing,
            _ if keys.len() == 1 => Touch::Key(keys[0]),
            _ => Touch::Keys(&keys),
        };
        if !writes {
            let (_, wait) = log.read(touch, || self.data(&ks, conn.db, cmd, &a, out));
            conn.logged = Logged::merge(conn.logged, self.read_wait(log, touch, wait));
            return;
        }
        // The deadlines are held inside the step, under the lock that
        // orders the log (which a compaction's copy takes before them);
        // the undo is kept by RESP, not the log's list ([`undo`]).
        let (mut journal, mut moved) = (None, Vec::new());
        let mut notes = Vec::new();
        let written = log.write(
            touch,
            |rec| {
                alone::select_prefix(rec, conn.db);
                rec.extend_from_slice(input);
                true
            },
            || undo::into(&mut journal, undo::of(db, &cmd, &a)),
            || {
                let mut held = self.hold_deadlines(conn.db, db, &cmd, &keys, false);
                let before =
                    notifying.then(|| notify::Before::of(&*db.store, keys.iter().copied()));
                let name = cmd.name();
                moved = self.data_logged(log, &ks, conn.db, cmd, &a, out);
                self.after_fast(conn.db, db, &cmd, &keys, held.as_mut(), &out[from..]);
                self.fast_events(conn.db, db, name, &a, before, &out[from..], &mut notes);
            },
        );
        match written {
            Ok((_, logged)) => {
                // Published once the log took the write (a write it
                // refused notifies no one).
                self.pubsub.notify(&notes);
                self.kept(log, conn, logged, journal.map(|j| (j, db, moved)))
            }
            Err(e) => return self.refused(e, out),
        }
        if log.wal().compaction_due() {
            // The copy holds every deadline stripe: alone, with none held.
            drop(ks);
            self.compact_alone(log);
        }
    }

    /// A fast-path command without a log, on database `n`.
    fn unlogged(&self, ks: &Keyspace, n: usize, cmd: Cmd, a: &Args, out: &mut Vec<u8>) {
        let db = &ks.dbs[n];
        let writes = changes_data(&cmd);
        let notifying = writes && self.pubsub.events() != 0;
        let from = out.len();
        // The keys' list is made only when deadlines, watches or
        // notifications need it: a command on the fast path allocates
        // nothing else.
        let need = !db.expires.is_empty() || (writes && self.watches.any()) || notifying;
        let keys = if need { fast_keys(&cmd, a) } else { Vec::new() };
        let mut held = self.hold_deadlines(n, db, &cmd, &keys, true);
        let before = notifying.then(|| notify::Before::of(&*db.store, keys.iter().copied()));
        let name = cmd.name();
        self.data(ks, n, cmd, a, out);
        self.after_fast(n, db, &cmd, &keys, held.as_mut(), &out[from..]);
        if before.is_some() {
            let mut notes = Vec::new();
            self.fast_events(n, db, name, a, before, &out[from..], &mut notes);
            self.pubsub.notify(&notes);
        }
    }

    /// The events of a fast-path command `name` that ran on database `db`
    /// (number `n`), with `reply`; `before`: which of its keys existed
    /// (`None`: notifications are off).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fast_events(
        &self,
        n: usize,
        db: &keyspace::Database,
        name: Option<serverlab_proto::resp::Name>,
        a: &Args,
        before: Option<notify::Before>,
        reply: &[u8],
        notes: &mut Vec<notify::Note>,
    ) {
        let Some(before) = &before else { return };
        let nulls: [&[u8]; 4] = [b"$-1\r\n", b"*-1\r\n", b"_\r\n", b"*0\r\n"];
        if reply.starts_with(b"-") || nulls.contains(&reply) {
            return;
        }
        if matches!(name, Some(serverlab_proto::resp::Name::Set)) && !reply.starts_with(b"+OK") {
            return;
        }
        // INCR, DECR and DECRBY parse as INCRBY: the name as sent.
        let Some(name) = serverlab_proto::resp::Name::find(a.arg(0)).or(name) else {
            return;
        };
        let ran = notify::Ran {
            name,
            a,
            db: n,
            reply,
            before,
            exists: &|k| db.store.exists(k),
            spared: &[],
        };
        notify::events(&ran, notes);
    }

    /// A compaction's cut and copy, with the keyspace held alone.
    fn compact_alone(&self, log: &Durable) {
        let ks = self.keyspace.write().unwrap_or_else(|e| e.into_inner());
        snapshot::compact_if_due(log, &ks, self.limits.max_args);
    }

    /// Once the log has failed: its uncommitted writes are taken back,
    /// with the keyspace held alone, before anything reads it.
    fn settle_if_failed(&self) {
        if let Some(log) = self.log.as_ref().filter(|l| self.in_flight.unsettled(l)) {
            let mut ks = self.keyspace.write().unwrap_or_else(|e| e.into_inner());
            self.in_flight.settle(log, &mut ks);
        }
    }

    /// What a fast-path read's reply waits for: `wait`, the log's answer;
    /// but if the log failed after [`Self::settle_if_failed`] looked,
    /// what was read may be a write it never committed, which only the
    /// gate taken alone takes back: the reply then waits for it as before
    /// the failure, the wait fails, and the reply is never sent.
    fn read_wait(&self, log: &Durable, touch: Touch, wait: Option<Logged>) -> Option<Logged> {
        if wait.is_none() && self.in_flight.unsettled(log) {
            return log.waits(touch);
        }
        wait
    }

    /// A fast-path write applied under the log: as [`Self::data`], but
    /// under `always` the values a SET, MSET or DEL replaces or removes
    /// are moved out, for its undo ([`undo::apply`]), and handed back.
    fn data_logged(
        &self,
        log: &Durable,
        ks: &Keyspace,
        n: usize,
        cmd: Cmd,
        a: &Args,
        out: &mut Vec<u8>,
    ) -> undo::Moved {
        if log.undoes() {
            return undo::apply(self, ks, n, cmd, a, out);
        }
        self.data(ks, n, cmd, a, out);
        Vec::new()
    }

    /// A fast-path write logged: its undo (with what it moved out of
    /// database `db`) is kept until its commit.
    fn kept(
        &self,
        log: &Durable,
        conn: &mut RespConn,
        logged: Option<Logged>,
        journal: Option<(keyspace::Journal, &keyspace::Database, undo::Moved)>,
    ) {
        if let (Some((mut j, db, moved)), Some(Logged::Ticket(t))) = (journal, logged) {
            undo::moved_back(&mut j, db, moved);
            self.in_flight.push(log.wal(), t, j);
        }
        conn.logged = Logged::merge(conn.logged, logged);
    }

    /// After a fast-path command: a write that wrote drops the deadlines
    /// of keys it overwrote or removed, tells the watchers and the
    /// waiting pops.
    fn after_fast(
        &self,
        n: usize,
        db: &keyspace::Database,
        cmd: &Cmd,
        keys: &[&[u8]],
        held: Option<&mut expires::Held>,
        reply: &[u8],
    ) {
        if !changes_data(cmd) || !wrote(cmd, reply) {
            return;
        }
        if let Some(h) = held {
            for k in keys {
                // SET and MSET clear a deadline; a key written away
                // (DEL, the last element popped) loses it.
                if overwrites(cmd) || !db.store.exists(k) {
                    h.remove(k);
                }
            }
        }
        if self.watches.any() {
            keys.iter().for_each(|k| self.watches.touch(n, k));
        }
        // Only a waiting pop looks at the count: no shared counter for
        // every push of a busy server.
        if matches!(cmd, Cmd::List(ListCmd::Push { .. })) && self.blocked.len() > 0 {
            self.pushes.fetch_add(1, Ordering::SeqCst);
            // It began before they blocked, so it served none of them:
            // they look for themselves.
            self.blocked.kick();
        }
    }

    /// Whether a key the command touches (every key of the database, for
    /// DBSIZE) is past its deadline. Not while the log replays.
    fn expired_any(&self, db: &keyspace::Database, cmd: &Cmd, keys: &[&[u8]]) -> bool {
        if db.expires.is_empty() || self.replaying() {
            return false;
        }
        let now = expires::now_ms();
        match cmd {
            Cmd::Server(ServerCmd::DbSize) => db.expires.any_due(None, now),
            _ => db.expires.any_due(Some(keys), now),
        }
    }

    /// While keys of `db` have deadlines: the deadlines of `keys`, held
    /// for the command's step; with `expire`, those past deleted first
    /// (DBSIZE deletes every key past its deadline before it counts).
    /// Nothing expires while the log replays.
    fn hold_deadlines<'d>(
        &self,
        n: usize,
        db: &'d keyspace::Database,
        cmd: &Cmd,
        keys: &[&'d [u8]],
        expire: bool,
    ) -> Option<expires::Held<'d>> {
        if db.expires.is_empty() {
            return None;
        }
        let now = expires::now_ms();
        let mut h = db.expires.hold(keys.iter().copied());
        if expire && !self.replaying() {
            let mut gone: Vec<Box<[u8]>> = Vec::new();
            for k in keys {
                if h.expire_if_due(&*db.store, k, now) {
                    gone.push((*k).into());
                }
            }
            if matches!(cmd, Cmd::Server(ServerCmd::DbSize)) {
                db.expires
                    .active(&*db.store, now, &mut |k| gone.push(k.into()));
            }
            self.pubsub.expired(n, gone.iter().map(|k| &k[..]));
        }
        Some(h)
    }

    /// A write the log refused: the client is told why.
    fn refused(&self, e: Refused, out: &mut Vec<u8>) {
        match e {
            Refused::Failed(why) => {
                self.stats.refused();
                let msg = format!("MISCONF {why}; writes are refused");
                reply::error(out, one_line(&msg).as_bytes());
            }
            Refused::TooLong(why) => {
                reply::error(out, one_line(&format!("ERR {why}")).as_bytes());
            }
        }
    }

    /// Run a fast-path command on database `db` (number `n`) and append
    /// its reply.
    fn data(&self, ks: &Keyspace, n: usize, cmd: Cmd, a: &Args, out: &mut Vec<u8>) {
        let store = &*ks.dbs[n].store;
        match cmd {
            Cmd::Str(c) => self.strings(store, c, a, out),
            Cmd::List(c) => self.lists(store, c, a, out),
            Cmd::Server(ServerCmd::Info) => self.info(ks, a, out),
            Cmd::Server(c) => self.server(store, c, a, out),
            Cmd::Conn(_) | Cmd::Reject(_) | Cmd::Ext(_) => unreachable!("not a fast command"),
        }
    }

    /// The string commands.
    fn strings(&self, store: &dyn RespStore, cmd: StrCmd, a: &Args, out: &mut Vec<u8>) {
        match cmd {
            StrCmd::Get(k) => self.get(store, a.get(k), out),
            StrCmd::Set { key, value, cond } => {
                if store.set(a.get(key), a.get(value), cond) {
                    reply::ok(out)
                } else {
                    reply::null(out)
                }
            }
            StrCmd::Del => {
                let n = a.from(1).filter(|k| store.del(k)).count();
                reply::int(out, n as i64)
            }
            StrCmd::Exists => {
                let n = a.from(1).filter(|k| store.exists(k)).count();
                reply::int(out, n as i64)
            }
            StrCmd::IncrBy { key, by } => self.incr_by(store, a.get(key), by, out),
            StrCmd::MGet => {
                let (from, bound) = (out.len(), self.limits.max_query);
                reply::array(out, a.count() - 1);
                for k in a.from(1) {
                    // A key holding a list answers nil, as Redis's MGET does.
                    if !matches!(store.get(k, &mut |v| reply::bulk(out, v)), Ok(true)) {
                        reply::null(out);
                    }
                    if past(out, from, bound) {
                        return;
                    }
                }
            }
            StrCmd::MSet => {
                let mut kv = a.from(1);
                while let (Some(k), Some(v)) = (kv.next(), kv.next()) {
                    store.set(k, v, serverlab_proto::resp::SetCond::Always);
                }
                reply::ok(out)
            }
        }
    }

    fn incr_by(&self, store: &dyn RespStore, key: &[u8], by: i64, out: &mut Vec<u8>) {
        match store.incr_by(key, by) {
            Ok(n) => reply::int(out, n),
            Err(IncrError::WrongType) => self.wrongtype(out),
            Err(e) => {
                self.stats.not_integer();
                let msg = match e {
                    IncrError::Overflow => reply::OVERFLOW,
                    _ => reply::NOT_INTEGER,
                };
                reply::error(out, msg)
            }
        }
    }

    /// The list commands; a key holding a string gets WRONGTYPE.
    fn lists(&self, store: &dyn RespStore, cmd: ListCmd, a: &Args, out: &mut Vec<u8>) {
        if let Err(WrongType) = self.list_reply(store, cmd, a, out) {
            self.wrongtype(out)
        }
    }

    fn list_reply(
        &self,
        store: &dyn RespStore,
        cmd: ListCmd,
        a: &Args,
        out: &mut Vec<u8>,
    ) -> Result<(), WrongType> {
        match cmd {
            ListCmd::Push { end, key } => {
                let n = store.push(a.get(key), end, &mut a.from(2))?;
                reply::int(out, n as i64)
            }
            ListCmd::Pop { end, key, count } => {
                match (store.pop(a.get(key), end, count.unwrap_or(1))?, count) {
                    (None, Some(_)) => reply::null_array(out),
                    (None, None) => reply::null(out),
                    (Some(items), None) => reply::bulk(out, &items[0]),
                    (Some(items), Some(_)) => {
                        reply::array(out, items.len());
                        items.iter().for_each(|i| reply::bulk(out, i));
                    }
                }
            }
            ListCmd::LLen(k) => reply::int(out, store.llen(a.get(k))? as i64),
            ListCmd::LIndex { key, index: None } => {
                // As Redis: the key first (nil, WRONGTYPE), then the
                // index. A list is never empty, so a length of 0 is no key.
                if store.llen(a.get(key))? == 0 {
                    reply::null(out)
                } else {
                    self.stats.rejected(Rejection::NotInteger);
                    reply::error(out, reply::NOT_INTEGER)
                }
            }
            ListCmd::LIndex {
                key,
                index: Some(index),
            } => {
                let found = store.lindex(a.get(key), index, &mut |v| reply::bulk(out, v))?;
                if !found {
                    reply::null(out)
                }
            }
            ListCmd::LRange { key, start, stop } => {
                store.lrange(a.get(key), start, stop, &mut |n, items| {
                    reply::array(out, n);
                    items.for_each(|i| reply::bulk(out, i));
                })?
            }
        }
        Ok(())
    }

    /// The commands about the server and its data as a whole.
    fn server(&self, store: &dyn RespStore, cmd: ServerCmd, a: &Args, out: &mut Vec<u8>) {
        match cmd {
            ServerCmd::Ping(None) => reply::simple(out, b"PONG"),
            ServerCmd::Ping(Some(m)) | ServerCmd::Echo(m) => reply::bulk(out, a.get(m)),
            ServerCmd::DbSize => reply::int(out, store.len() as i64),
            ServerCmd::Info => unreachable!("INFO reads the whole keyspace"),
            ServerCmd::Command(q) => admin::command(q, a, out),
            ServerCmd::ConfigGet => admin::config_get(a, self.pubsub.events(), out),
        }
    }

    fn get(&self, store: &dyn RespStore, key: &[u8], out: &mut Vec<u8>) {
        match store.get(key, &mut |v| reply::bulk(out, v)) {
            Ok(true) => {}
            Ok(false) => reply::null(out),
            Err(_) => self.wrongtype(out),
        }
    }

    fn info(&self, ks: &Keyspace, a: &Args, out: &mut Vec<u8>) {
        let sections: Vec<String> = a
            .from(1)
            .map(|s| String::from_utf8_lossy(s).to_ascii_lowercase())
            .collect();
        let now = expires::now_ms();
        let dbs = ks
            .dbs
            .iter()
            .map(|d| admin::DbFacts {
                keys: d.store.len(),
                expires: d.expires.len(),
                avg_ttl: d.expires.avg_ttl(now),
            })
            .collect::<Vec<_>>();
        let text = admin::info(&admin::InfoFacts {
            sections: &sections,
            about: &self.about,
            common: &self.common,
            dbs: &dbs,
            blocked: self.blocked.len(),
            pubsub: self.pubsub.sizes(),
            stats: &self.stats,
            log: self.log.as_deref(),
        });
        reply::bulk(out, text.as_bytes());
    }
}

/// The keys a fast-path command reads or writes, by its row's key spec
/// (none for the commands about the server).
fn fast_keys<'a>(cmd: &Cmd, a: &Args<'a>) -> Vec<&'a [u8]> {
    cmd.name()
        .and_then(|n| alone::keys_of(n, a, |_| true))
        .unwrap_or_default()
}

/// Whether the reply being made from `out[from..]` has passed `bound`
/// (`--max-query`) bytes: if so it is dropped, and replaced with the
/// error that says so. A reply the request sizes, not the data (MGET,
/// HMGET and SORT's GET naming one large value many times, SRANDMEMBER's
/// picks), is bounded so (docs/protocols/resp.md).
pub(crate) fn past(out: &mut Vec<u8>, from: usize, bound: usize) -> bool {
    if out.len() - from <= bound {
        return false;
    }
    out.truncate(from);
    too_large(out, bound);
    true
}

/// The error a reply too large for `bound` (`--max-query`) bytes is.
pub(crate) fn too_large(out: &mut Vec<u8>, bound: usize) {
    let msg = format!("ERR the reply would pass --max-query ({bound} bytes)");
    reply::error(out, msg.as_bytes())
}

/// Whether a fast-path `cmd` may change data (and so is logged): its
/// row's access.
fn changes_data(cmd: &Cmd) -> bool {
    cmd.name().is_some_and(|n| n.facts().writes())
}

/// Whether a fast-path `cmd` reads every key of its database (DBSIZE,
/// INFO: their rows say [`Flags::ALL_KEYS`]).
fn all_keys(cmd: &Cmd) -> bool {
    cmd.name().is_some_and(|n| n.facts().has(Flags::ALL_KEYS))
}

/// Whether a fast-path `cmd` replaces its keys' values (and so their
/// deadlines go).
fn overwrites(cmd: &Cmd) -> bool {
    matches!(cmd, Cmd::Str(StrCmd::Set { .. } | StrCmd::MSet))
}

/// Whether a fast-path write that replied `reply` wrote: all do but a
/// SET that NX or XX held back (`$-1`), which keeps the key's deadline,
/// as Redis's does.
fn wrote(cmd: &Cmd, reply: &[u8]) -> bool {
    !matches!(cmd, Cmd::Str(StrCmd::Set { .. })) || reply.starts_with(b"+OK")
}

/// RESET, as Redis 7.0's: the connection as it was when it opened — its
/// transaction discarded, its watches and subscriptions forgotten,
/// database 0, no name, no longer a monitor — answered `+RESET`. (It has
/// no tracking or user to reset: neither is served.)
fn reset(svc: &RespService, conn: &mut RespConn, out: &mut Vec<u8>) {
    svc.reset(conn);
    reply::simple(out, b"RESET");
}

/// The commands about the connection itself; `exec`: run by EXEC.
fn connection(
    svc: &RespService,
    conn: &mut RespConn,
    cmd: ConnCmd,
    input: &[u8],
    out: &mut Vec<u8>,
    exec: bool,
) -> After {
    match cmd {
        ConnCmd::ClientSetName(name) | ConnCmd::Hello(Some(name)) => {
            let name = conn.framer.get(input, name);
            conn.name = (!name.is_empty()).then(|| name.into());
            conn.client.set_name(conn.name.as_deref());
            match cmd {
                ConnCmd::Hello(_) => admin::hello(conn.id, out),
                _ => reply::ok(out),
            }
        }
        ConnCmd::ClientGetName => match &conn.name {
            Some(n) => reply::bulk(out, n),
            None => reply::null(out),
        },
        ConnCmd::ClientSetInfo => reply::ok(out),
        ConnCmd::Select(db) => {
            conn.db = db;
            reply::ok(out)
        }
        ConnCmd::ClientId => reply::int(out, conn.id as i64),
        ConnCmd::Hello(None) => admin::hello(conn.id, out),
        ConnCmd::Quit => {
            reply::ok(out);
            return After::Close;
        }
        ConnCmd::ClientList => {
            let a = Args {
                framer: &conn.framer,
                input,
            };
            svc.clients.list(&a, out, svc.limits.max_query)
        }
        ConnCmd::ClientInfo => {
            let mut text = String::new();
            conn.client.line(&mut text);
            reply::bulk(out, text.as_bytes())
        }
        // A transaction's client expects a reply per command (Redis's
        // DENY BLOCKING).
        ConnCmd::Monitor if exec => {
            reply::error(out, b"ERR MONITOR isn't allowed for DENY BLOCKING client")
        }
        // A second MONITOR is answered nothing, as Redis's.
        ConnCmd::Monitor => {
            if svc.pubsub.monitor(conn.id, &mut conn.subs) {
                reply::ok(out)
            }
        }
        ConnCmd::Reset => unreachable!("RESET is run by `reset`"),
    }
    After::Continue
}

/// A request's arguments, to read.
pub(crate) struct Args<'a> {
    framer: &'a Framer,
    input: &'a [u8],
}

impl<'a> Args<'a> {
    pub(crate) fn get(&self, s: Span) -> &'a [u8] {
        self.framer.get(self.input, s)
    }

    pub(crate) fn count(&self) -> usize {
        self.framer.args().len()
    }

    /// Argument `i` (0 is the command's name).
    pub(crate) fn arg(&self, i: usize) -> &'a [u8] {
        self.framer.arg(self.input, i)
    }

    /// Argument `i`, if there is one.
    pub(crate) fn try_arg(&self, i: usize) -> Option<&'a [u8]> {
        (i < self.count()).then(|| self.arg(i))
    }

    /// Arguments `i` and after.
    pub(crate) fn from(&self, i: usize) -> impl Iterator<Item = &'a [u8]> + 'a {
        let (framer, input) = (self.framer, self.input);
        framer.args()[i..]
            .iter()
            .map(move |&s| framer.get(input, s))
    }
}

/// `msg` as one line: an error reply cannot hold CR or LF.
fn one_line(msg: &str) -> String {
    msg.replace(['\r', '\n'], " ")
}

/// At most `max` bytes of `b`, up to any NUL (as C's `%.*s` prints it).
fn c_str(b: &[u8], max: usize) -> String {
    let b = &b[..b.len().min(max)];
    let b = memchr_nul(b);
    String::from_utf8_lossy(b).into_owned()
}

fn memchr_nul(b: &[u8]) -> &[u8] {
    match b.iter().position(|&c| c == 0) {
        Some(i) => &b[..i],
        None => b,
    }
}

/// Redis 7's `unknown command '<name>', with args beginning with: 'a' 'b' `
/// (each argument quoted and followed by a space, until 128 bytes).
fn unknown_command(framer: &Framer, input: &[u8]) -> String {
    let mut args = String::new();
    for i in 1..framer.args().len() {
        if args.len() >= 128 {
            break;
        }
        let room = 128 - args.len();
        args += &format!("'{}' ", c_str(framer.arg(input, i), room));
    }
    format!(
        "ERR unknown command '{}', with args beginning with: {args}",
        c_str(framer.arg(input, 0), 128)
    )
}

impl Service for RespService {
    type Conn = RespConn;
    type Request = RespRequest;

    fn open(&self, peer: impl Into<crate::Peer>) -> RespConn {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        RespConn {
            framer: Framer::new(),
            id,
            name: None,
            logged: None,
            db: 0,
            multi: None,
            watching: Default::default(),
            block: None,
            ready: None,
            subs: Default::default(),
            replies: Default::default(),
            client: self.clients.open(id, peer.into()),
        }
    }

    fn input_limit(&self) -> usize {
        self.limits.max_query
    }

    fn frame(&self, conn: &mut RespConn, input: &[u8], out: &mut Vec<u8>) -> Frame<RespRequest> {
        match conn.framer.frame(input, &self.limits) {
            Framed::Incomplete => Frame::Incomplete,
            Framed::Empty { len } => Frame::Ready {
                len,
                request: RespRequest(Req::Nothing),
            },
            Framed::Request { len } => Frame::Ready {
                len,
                request: RespRequest(Req::Cmd(command::parse(&conn.framer, &input[..len]))),
            },
            Framed::Error(e) => {
                self.protocol_error(e, out);
                Frame::Close
            }
        }
    }

    fn apply(
        &self,
        conn: &mut RespConn,
        req: RespRequest,
        input: &[u8],
        out: &mut Vec<u8>,
    ) -> After {
        match req.0 {
            Req::Nothing => After::Continue,
            Req::Cmd(cmd) => {
                self.stats.command(&cmd);
                // Messages published to it before this command come first.
                if conn.subs.listening() && !self.pubsub.drain(&conn.subs, out) {
                    return After::Close;
                }
                let first = conn.framer.arg(input, 0);
                let name = stats::called_name(&cmd, first);
                let a = Args {
                    framer: &conn.framer,
                    input,
                };
                conn.client.ran(clients::cmd_code(name, &a));
                let fed = self.pubsub.monitored() && self.fed(conn, &cmd, name, &a);
                let from = out.len();
                let after = match conn.ready.take() {
                    // A blocked pop, served while it waited.
                    Some(ready) => {
                        out.extend_from_slice(&ready);
                        After::Continue
                    }
                    None => self.run(conn, cmd, input, out),
                };
                let first = conn.framer.arg(input, 0);
                self.stats
                    .replied(&cmd, first, out.get(from..).unwrap_or_default());
                replies::after(conn, cmd.name(), out, from);
                if fed {
                    self.feed(conn, input);
                }
                conn.client.state(conn);
                after
            }
        }
    }

    fn wait(
        &self,
        conn: &mut RespConn,
        req: &RespRequest,
        input: &[u8],
        waker: Option<&std::task::Waker>,
    ) -> Option<Delay> {
        match req.0 {
            Req::Cmd(Cmd::Ext(name)) => blocking::wait(self, conn, name, input, waker),
            _ => None,
        }
    }

    fn close(&self, conn: RespConn) {
        self.clients.close(conn.id);
        multi::unwatch(self, &conn.watching);
        self.blocked.remove(conn.id);
        let mut subs = conn.subs;
        self.pubsub.forget(conn.id, &mut subs);
    }

    fn pushes(
        &self,
        conn: &mut RespConn,
        out: Option<&mut Vec<u8>>,
        waker: Option<&std::task::Waker>,
    ) -> Pushes {
        self.pubsub.pushes(&conn.subs, out, waker)
    }

    fn overflow(&self, _conn: &mut RespConn, out: &mut Vec<u8>) {
        self.protocol_error(ProtocolError::QueryBufferFull, out);
    }

    fn common(&self) -> &Common {
        &self.common
    }

    fn wal(&self) -> Option<&Wal> {
        self.log.as_ref().map(|l| &**l.wal())
    }

    fn logged(&self, conn: &mut RespConn) -> Option<Logged> {
        let logged = conn.logged.take();
        if crate::sim::planted(crate::sim::Mutant::AckBeforeFsync) {
            return None;
        }
        logged
    }

    type Stats = RespStats;

    fn stats(&self) -> RespStats {
        let keys = self.keyspace.read().map_or(0, |ks| ks.keys());
        let mut stats = self.stats.stats(keys);
        stats.durability = self.log.as_ref().map(|log| log.stats());
        let (channels, patterns) = self.pubsub.sizes();
        stats.pubsub = PubSubStats {
            channels: channels as u64,
            patterns: patterns as u64,
            messages_delivered: self.pubsub.delivered(),
            slow_subscribers_disconnected: self.pubsub.cut_count(),
        };
        stats
    }

    /// The command families, as the report counts them, then `rejected`
    /// and `empty`.
    const OPS: &'static [&'static str] = &stats::OPS;

    fn op(&self, _conn: &RespConn, req: &RespRequest) -> usize {
        match &req.0 {
            Req::Nothing => stats::EMPTY_OP,
            Req::Cmd(cmd) => stats::index(cmd),
        }
    }

    fn store_size(&self) -> Option<(&'static str, u64)> {
        let keys = self.keyspace.read().map_or(0, |ks| ks.keys());
        Some(("keys", keys as u64))
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod tests_table;

#[cfg(test)]
mod tests_undo;
