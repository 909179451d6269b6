//! The commands beyond the fast path, and how they run: alone.
//!
//! A command here (APPEND, LINSERT, EXPIRE, RENAME, SADD, …) takes the
//! keyspace's gate to write, so nothing else runs while it does; it may
//! read and write any keys of any database as one step, and works on
//! whole values ([`Value`](serverlab_store::resp::Value): a key's value
//! taken out of the store and put back). Before it runs, every key past
//! its deadline is deleted (a command alone never sees an expired key).
//!
//! Each family of commands is a module with one entry, `run`, that reads
//! its arguments, applies the command and encodes its reply: `strings`,
//! `lists` (with the blocking pops' single tries), `keys` (the keyspace
//! and deadlines), `colls` (sets, hashes and sorted sets), `sort`, `dump`
//! (DUMP, RESTORE) and `server` (FLUSHALL, FLUSHDB, SWAPDB, CONFIG,
//! FUNCTION, CLIENT, OBJECT, TIME). Which family runs a command, and
//! which keys it reads and writes, is its row's in the command table
//! ([`Name::facts`]: `family`, `keys`).
//!
//! What a command changed is logged as the family says ([`Running::log_input`],
//! [`Running::log`]): usually the command as it arrived; a relative deadline
//! as an absolute one (`EXPIRE k 10` as `PEXPIREAT k …`), a random pick
//! as what was picked (`SPOP` as `SREM`), a blocking pop as the pop it
//! came to. Under the log it is applied first and logged after (nothing
//! else runs in between, and its reply waits for the record's commit);
//! under `always` each change records what takes it back in the group's
//! [`Journal`] as it is made ([`undoes`] says how each write does), and
//! if the log refuses the group, its journal runs, newest first, before
//! every write still uncommitted is taken back in turn: no one can see
//! it. A command alone that wrote nothing waits, as a read on the fast
//! path does, for the last write marked on what it read.

pub(crate) mod colls;
pub(crate) mod dump;
pub(crate) mod keys;
pub(crate) mod lists;
pub(crate) mod server;
pub(crate) mod sort;
pub(crate) mod strings;
pub(crate) mod usage;

use super::expirer::{delete_due, PASS_KEYS};
use super::expires::now_ms;
use super::keyspace::{Database, Deadline, Journal, Kept, Keyspace};
use super::notify::{self, Before, Note, Ran};
use super::{fast_keys, overwrites, Args, RespConn, RespService};
use crate::durable::Touch;
use crate::Logged;
use crossbeam_utils::sync::ShardedLockWriteGuard;
use serverlab_proto::resp::client::command;
use serverlab_proto::resp::command::Cmd;
use serverlab_proto::resp::name::{Family, Flags, Role};
use serverlab_proto::resp::{reply, Name};
use serverlab_store::resp::RespStore;
use std::cell::RefCell;
use std::sync::atomic::Ordering;

/// What a command running alone works with.
pub(crate) struct Running<'a> {
    /// The command being run.
    pub name: Name,
    pub svc: &'a RespService,
    pub ks: &'a mut Keyspace,
    /// The connection's database.
    pub db: usize,
    /// Milliseconds since the Unix epoch, as the command began.
    pub now: i64,
    /// A blocking pop's try: with nothing to pop it sets `would_block`
    /// and replies nothing. Otherwise (in a transaction, or replayed) a
    /// blocking pop with nothing to pop replies as if it timed out.
    pub trying: bool,
    pub would_block: bool,
    input: &'a [u8],
    /// The records of what the command changed, if anything.
    record: Option<Vec<u8>>,
    /// What takes the command back (`always` only): a family whose
    /// commands [`undoes`] says are [`Undoes::Own`] records each change's
    /// step here as it makes it.
    journal: Option<&'a mut Journal>,
    /// The keys it computed from the data and read (SORT's `BY` and
    /// `GET` patterns), `always` only: its reply waits for their writes.
    computed: RefCell<Vec<Box<[u8]>>>,
    /// Keys its row says it writes that it left as they were although it
    /// wrote others (SMOVE's destination that had the member): watchers
    /// of those are not told.
    spared: Vec<Box<[u8]>>,
}

impl Running<'_> {
    /// The connection's database.
    pub fn here(&self) -> &Database {
        &self.ks.dbs[self.db]
    }

    pub fn store(&self) -> &dyn RespStore {
        &*self.ks.dbs[self.db].store
    }

    /// Log the command as it arrived.
    pub fn log_input(&mut self) {
        let rec = self.record.get_or_insert_with(Vec::new);
        rec.extend_from_slice(self.input);
    }

    /// Log `args` as a command (another command, or this one rewritten:
    /// only a command whose row says [`Flags::LOGGED_AS_OTHER`]).
    /// Several calls log several commands, in order.
    pub fn log(&mut self, args: &[&[u8]]) {
        debug_assert!(
            self.name.facts().has(Flags::LOGGED_AS_OTHER),
            "{:?} is logged as another command: its row must say LOGGED_AS_OTHER",
            self.name
        );
        let rec = self.record.get_or_insert_with(Vec::new);
        command(rec, args);
    }

    pub fn wrongtype(&self, out: &mut Vec<u8>) {
        self.svc.wrongtype(out)
    }

    /// Whether changes must record what takes them back (`always`).
    pub fn keeps(&self) -> bool {
        self.journal.is_some()
    }

    /// Records a step that takes back a change just made (nothing when
    /// no log needs it: build costly steps only when [`Running::keeps`]).
    pub fn undo(&mut self, step: impl FnOnce(&mut Keyspace) + Send + 'static) {
        if let Some(j) = self.journal.as_deref_mut() {
            j.push(step);
        }
    }

    /// Records that `key` of database `db` is to be put back as it is now
    /// (its value and deadline), for a change that replaces the value:
    /// the value is moved out of the store (not copied), so the key is
    /// absent after this when a log keeps undos.
    pub fn keep(&mut self, db: usize, key: &[u8]) {
        if let Some(j) = self.journal.as_deref_mut() {
            j.keep(Kept::take(&self.ks.dbs[db], key));
        }
    }

    /// Records that the deadline of `key` in database `db` is to be put
    /// back as it is now.
    pub fn keep_deadline(&mut self, db: usize, key: &[u8]) {
        if let Some(j) = self.journal.as_deref_mut() {
            j.deadline(Deadline::of(&self.ks.dbs[db], key));
        }
    }

    /// An error reply, `msg` without the leading `-`.
    pub fn error(&self, out: &mut Vec<u8>, msg: &str) {
        reply::error(out, msg.as_bytes())
    }

    /// Notes that `key`, which the command's row says it writes, was left
    /// as it was by a command that wrote other keys (Redis signals only
    /// the keys it changed: a WATCH of this one still holds).
    pub fn spare(&mut self, key: &[u8]) {
        self.spared.push(key.into());
    }

    /// Notes a key the command computed from the data and read (the
    /// table's [`Find::Computed`](serverlab_proto::resp::name::Find)
    /// keys: SORT's patterns), for what its reply waits for.
    pub fn read_computed(&self, key: &[u8]) {
        if self.keeps() {
            self.computed.borrow_mut().push(key.into());
        }
    }
}

/// Commands run alone, one after another (one command, or a
/// transaction's), under the gate; then logged together.
pub(crate) struct Alone<'g> {
    ks: ShardedLockWriteGuard<'g, Keyspace>,
    now: i64,
    /// The records, concatenated; with `SELECT`s where the database
    /// changes (a record replays from database 0).
    record: Vec<u8>,
    rec_db: usize,
    /// The keys written, for the log's marks; `None`: every key.
    touched: Option<Vec<Vec<u8>>>,
    /// The keys read or written, for what the replies wait for when
    /// nothing was written (`always` only); `None`: every key.
    seen: Option<Vec<Vec<u8>>>,
    /// What takes every change back if the log refuses (`always` only).
    journal: Journal,
    keep: bool,
    /// The log had failed when the group began (its uncommitted writes
    /// were then taken back): the store holds only what is on disk.
    failed: bool,
    /// Keyspace notifications were on as the group began.
    notifying: bool,
    /// The events of the group's writes, published once the log took
    /// its record ([`super::notify`]).
    notes: Vec<Note>,
}

impl<'g> Alone<'g> {
    pub(crate) fn begin(svc: &'g RespService) -> Alone<'g> {
        let mut ks = svc.keyspace.write().unwrap_or_else(|e| e.into_inner());
        let failed = svc.log.as_ref().is_some_and(|log| {
            // A failed log's uncommitted writes go before anything is read.
            svc.in_flight.settle(log, &mut ks);
            log.failure().is_some()
        });
        let now = now_ms();
        let mut alone = Alone {
            ks,
            now,
            record: Vec::new(),
            rec_db: 0,
            touched: Some(Vec::new()),
            seen: Some(Vec::new()),
            journal: Journal::default(),
            keep: svc.log.as_ref().is_some_and(|l| l.undoes()),
            failed,
            notifying: svc.pubsub.events() != 0,
            notes: Vec::new(),
        };
        if !svc.replaying() {
            alone.expire_due();
        }
        alone
    }

    /// Deletes the keys past their deadline, in every database, up to
    /// [`PASS_KEYS`] (as the expirer's pass does), each logged as the
    /// `DEL` it comes to (as Redis propagates an expiry), so the log
    /// replays to the same keys without expiring anything. Any left (more
    /// fell due at once) go by later passes; the command's own keys go
    /// before it runs ([`Alone::expire_own`]).
    fn expire_due(&mut self) {
        let journal = self.keep.then_some(&mut self.journal);
        for (db, key) in delete_due(&self.ks, self.now, PASS_KEYS, journal) {
            self.expired(db, &key);
        }
    }

    /// Deletes those of `keys` in database `db` that are past their
    /// deadline (left by [`Alone::expire_due`]'s bound), logged as its
    /// deletions are: a command alone never sees its own keys expired.
    fn expire_own(&mut self, svc: &RespService, db: usize, keys: &[&[u8]]) {
        if svc.replaying() || self.ks.dbs[db].expires.is_empty() {
            return;
        }
        for k in keys {
            let d = &self.ks.dbs[db];
            if d.expires.get(k).is_some_and(|w| w <= self.now) {
                super::expirer::delete(d, k, self.keep.then_some(&mut self.journal));
                self.expired(db, k);
            }
        }
    }

    /// A key of `db` past its deadline was deleted: logged as its `DEL`.
    fn expired(&mut self, db: usize, key: &[u8]) {
        if self.notifying {
            self.notes.push(Note::expired(db, key));
        }
        let mut rec = Vec::new();
        command(&mut rec, &[b"DEL", key]);
        if let Some(t) = &mut self.touched {
            t.push(key.to_vec());
        }
        self.add_record(db, &rec);
    }

    /// The keyspace, as the commands alone see it.
    pub(crate) fn keyspace(&self) -> &Keyspace {
        &self.ks
    }

    /// Notes what a command read (`None`: every key), for the wait of a
    /// group that wrote nothing.
    pub(crate) fn saw(&mut self, keys: Option<&[&[u8]]>) {
        if !self.keep {
            return;
        }
        match (keys, &mut self.seen) {
            (Some(keys), Some(seen)) => seen.extend(keys.iter().map(|k| k.to_vec())),
            (None, seen) => *seen = None,
            (Some(_), None) => {}
        }
    }

    /// Runs one command alone and appends its reply; whether it would
    /// block (a blocking pop's try, with nothing to pop: no reply).
    pub(crate) fn one(
        &mut self,
        svc: &RespService,
        conn: &mut RespConn,
        cmd: Cmd,
        input: &[u8],
        out: &mut Vec<u8>,
        trying: bool,
    ) -> bool {
        let a = Args {
            framer: &conn.framer,
            input,
        };
        match cmd {
            Cmd::Conn(c) => {
                super::connection(svc, conn, c, input, out, true);
                false
            }
            Cmd::Reject(r) => {
                svc.reject(r, conn, input, out);
                false
            }
            // PING after a SUBSCRIBE in the same transaction.
            Cmd::Server(serverlab_proto::resp::ServerCmd::Ping(m)) if conn.subs.active() => {
                super::pubsub::pong(&a, m, out);
                false
            }
            // SUBSCRIBE, PUBLISH, … queued in a transaction.
            Cmd::Ext(name) if super::pubsub::is_pubsub(name) => {
                super::pubsub::run(svc, conn, name, input, out);
                false
            }
            Cmd::Ext(name) => self.ext(svc, conn.db, name, &a, out, trying),
            fast => {
                self.fast(svc, conn.db, fast, &a, input, out);
                false
            }
        }
    }

    fn fast(
        &mut self,
        svc: &RespService,
        db: usize,
        cmd: Cmd,
        a: &Args,
        input: &[u8],
        out: &mut Vec<u8>,
    ) {
        let keys = fast_keys(&cmd, a);
        self.expire_own(svc, db, &keys);
        let every = super::all_keys(&cmd);
        self.saw((!every).then_some(&keys[..]));
        let writes = super::changes_data(&cmd);
        let from = out.len();
        let name = cmd.name();
        let before =
            (writes && self.notifying).then(|| Before::of(self.store(db), keys.iter().copied()));
        if writes && self.keep {
            let mut undo = super::undo::of(&self.ks.dbs[db], &cmd, a);
            let moved = super::undo::apply(svc, &self.ks, db, cmd, a, out);
            super::undo::moved_back(&mut undo, &self.ks.dbs[db], moved);
            self.journal.append(undo);
        } else {
            svc.data(&self.ks, db, cmd, a, out);
        }
        let (d, notes) = (&self.ks.dbs[db], &mut self.notes);
        svc.fast_events(db, d, name, a, before, &out[from..], notes);
        if writes && super::wrote(&cmd, &out[from..]) {
            let mut rec = Vec::new();
            rec.extend_from_slice(input);
            self.after_write(svc, db, &keys, overwrites(&cmd), Some(rec));
        }
    }

    /// Before a write runs: what its [`undoes`] keeps ahead of it.
    fn keep_before(&mut self, name: Name, keys: &[&[u8]], db: usize) {
        let d = &self.ks.dbs[db];
        match undoes(name) {
            Undoes::Keys => keys.iter().for_each(|k| self.journal.keep(Kept::of(d, k))),
            Undoes::Own | Undoes::Deadlines => keys
                .iter()
                .for_each(|k| self.journal.deadline(Deadline::of(d, k))),
            Undoes::Databases => self.journal.databases(&self.ks),
            Undoes::Nothing => {}
        }
    }

    fn ext(
        &mut self,
        svc: &RespService,
        db: usize,
        name: Name,
        a: &Args,
        out: &mut Vec<u8>,
        trying: bool,
    ) -> bool {
        let keys = keys_of(name, a, Role::writes);
        let all = keys_of(name, a, |_| true);
        self.expire_own(svc, db, all.as_deref().unwrap_or_default());
        self.saw(all.as_deref());
        if name.facts().writes() && self.keep {
            self.keep_before(name, keys.as_deref().unwrap_or_default(), db);
        }
        let (before, from) = (self.before(name, keys.as_deref(), db), out.len());
        let steps = self.journal.len();
        let mut cx = Running {
            name,
            svc,
            ks: &mut self.ks,
            db,
            now: self.now,
            trying,
            would_block: false,
            input: a.input,
            record: None,
            journal: self.keep.then_some(&mut self.journal),
            computed: RefCell::default(),
            spared: Vec::new(),
        };
        dispatch(name, a, &mut cx, out);
        let (would_block, record, to) = (cx.would_block, cx.record, cx.db);
        let (spared, computed) = (cx.spared, cx.computed.into_inner());
        let before = before.filter(|_| record.is_some());
        self.events(name, a, db, before, &spared, &out[from..]);
        let db = to;
        if !computed.is_empty() {
            let read: Vec<&[u8]> = computed.iter().map(|k| &k[..]).collect();
            self.saw(Some(&read));
        }
        debug_assert!(
            !self.keep
                || record.is_none()
                || undoes(name) != Undoes::Own
                || self.journal.len() > steps,
            "{name:?} wrote, and its family recorded nothing that takes it back"
        );
        if self.ks.dbs.iter().any(|d| !d.expires.is_empty()) {
            svc.start_expirer();
        }
        if record.is_some() {
            match &keys {
                Some(keys) => {
                    let mut keys = keys.clone();
                    keys.retain(|k| !spared.iter().any(|s| **s == **k));
                    self.after_write(svc, db, &keys, false, record)
                }
                None => {
                    self.touched = None;
                    self.add_record(db, &record.unwrap_or_default());
                    svc.pushes.fetch_add(1, Ordering::Release);
                }
            }
        }
        would_block
    }

    /// Which of a write's `keys` exist before it runs, while
    /// notifications are on.
    fn before(&self, name: Name, keys: Option<&[&[u8]]>, db: usize) -> Option<Before> {
        let on = name.facts().writes() && self.notifying;
        on.then(|| Before::of(self.store(db), keys.unwrap_or_default().iter().copied()))
    }

    /// The events of a command alone (`before`: `None` unless it wrote
    /// with notifications on), with `reply`, kept for the group's end.
    fn events(
        &mut self,
        name: Name,
        a: &Args,
        db: usize,
        before: Option<Before>,
        spared: &[Box<[u8]>],
        reply: &[u8],
    ) {
        let Some(before) = &before else { return };
        let store = &*self.ks.dbs[db].store;
        let ran = Ran {
            name,
            a,
            db,
            reply,
            before,
            exists: &|k| store.exists(k),
            spared,
        };
        notify::events(&ran, &mut self.notes);
    }

    fn store(&self, db: usize) -> &dyn RespStore {
        &*self.ks.dbs[db].store
    }

    /// After a write to `keys` of database `db`: deadlines of keys gone
    /// (or overwritten) go, watchers are told, blocked pops look again,
    /// and the record joins the others.
    fn after_write(
        &mut self,
        svc: &RespService,
        db: usize,
        keys: &[&[u8]],
        overwritten: bool,
        record: Option<Vec<u8>>,
    ) {
        let d = &self.ks.dbs[db];
        if !d.expires.is_empty() {
            for k in keys {
                if overwritten || !d.store.exists(k) {
                    d.expires.remove(k);
                }
            }
        }
        keys.iter().for_each(|k| svc.watches.touch(db, k));
        if let Some(t) = &mut self.touched {
            t.extend(keys.iter().map(|k| k.to_vec()));
        }
        svc.pushes.fetch_add(1, Ordering::Release);
        if let Some(r) = record {
            self.add_record(db, &r);
        }
    }

    fn add_record(&mut self, db: usize, rec: &[u8]) {
        if db != self.rec_db && !crate::sim::planted(crate::sim::Mutant::LostSelect) {
            select(&mut self.record, db);
            self.rec_db = db;
        }
        self.record.extend_from_slice(rec);
    }

    /// Serves the waiting pops the writes made ready, in the order they
    /// blocked, until none is (see [`super::blocking`]); their replies
    /// wait for the log with the writer's.
    fn serve_waiters(&mut self, svc: &RespService) -> Vec<(u64, Vec<u8>)> {
        let mut served = Vec::new();
        while !self.record.is_empty() && svc.blocked.len() > served.len() {
            let keys = self.touched.clone();
            let mut any = false;
            for w in svc.blocked.waiting_on(keys.as_deref()) {
                if served.iter().any(|(id, _)| *id == w.id)
                    || !svc.blocked.first_in_line(w.id, &self.ks)
                {
                    continue;
                }
                let mut conn =
                    crate::Service::open(svc, std::net::SocketAddr::from(([0, 0, 0, 0], 0)));
                conn.id = w.id;
                conn.db = w.db;
                let cmd = match conn.framer.frame(&w.request, &svc.limits) {
                    serverlab_proto::resp::frame::Framed::Request { .. } => {
                        serverlab_proto::resp::command::parse(&conn.framer, &w.request)
                    }
                    _ => continue,
                };
                let mut reply = Vec::new();
                let logged = self.record.len();
                let popped = !self.one(svc, &mut conn, cmd, &w.request, &mut reply, true);
                if popped && crate::sim::planted(crate::sim::Mutant::UnloggedServedPop) {
                    self.record.truncate(logged);
                }
                if popped {
                    // Served: no longer ahead of the waiters after it.
                    svc.blocked.claim(w.id);
                    served.push((w.id, reply));
                    any = true;
                }
            }
            if !any {
                break;
            }
        }
        served
    }

    /// What the replies of a group that wrote nothing wait for (`always`):
    /// the last write marked on what it read, if not yet on disk (also if
    /// the log failed while the group ran: the wait then fails, and the
    /// replies are never sent); nothing if the log had failed before it
    /// began (it read what is on disk, and nothing will commit).
    fn read_wait(&self, log: &crate::Durable) -> Option<Logged> {
        if !self.keep || self.failed {
            return None;
        }
        let seen: Option<Vec<&[u8]>> = self
            .seen
            .as_ref()
            .map(|s| s.iter().map(|k| &k[..]).collect());
        match &seen {
            None => log.waits(Touch::Every),
            Some(s) if s.is_empty() => None,
            Some(s) => log.waits(Touch::Keys(s)),
        }
    }

    /// Serves the waiting pops the writes made ready, then logs what was
    /// changed (if the server keeps a log and anything was); if the log
    /// refuses, takes it all back (the waiting pops wait on), then every
    /// other write the log never committed, and says why.
    pub(crate) fn finish(
        mut self,
        svc: &RespService,
        conn: &mut RespConn,
    ) -> Result<(), crate::durable::Refused> {
        let served = if svc.blocked.len() > 0 {
            self.serve_waiters(svc)
        } else {
            Vec::new()
        };
        let claimed: Vec<u64> = served.iter().map(|(id, _)| *id).collect();
        let notes = std::mem::take(&mut self.notes);
        let settle = |logged: Option<Logged>| {
            // Applied and taken by the log (if one is kept): told.
            svc.pubsub.notify(&notes);
            for (id, reply) in served {
                svc.blocked.serve(id, reply, logged);
            }
        };
        let Some(log) = &svc.log else {
            settle(None);
            return Ok(());
        };
        if self.record.is_empty() {
            conn.logged = Logged::merge(conn.logged, self.read_wait(log));
            settle(None);
            return Ok(());
        }
        let touched: Option<Vec<&[u8]>> = self
            .touched
            .as_ref()
            .map(|t| t.iter().map(|k| &k[..]).collect());
        let touch = match &touched {
            None => Touch::Every,
            Some(t) => Touch::Keys(t),
        };
        let record = &self.record;
        let written = log.write(
            touch,
            |rec| {
                rec.extend_from_slice(record);
                true
            },
            // The journal is kept here, not in the log's own list: its
            // steps need the keyspace, held alone.
            || Box::new(|| {}) as crate::durable::Undo,
            || (),
        );
        let journal = std::mem::take(&mut self.journal);
        match written {
            Ok((_, logged)) => {
                if let (true, Some(Logged::Ticket(t))) = (self.keep, logged) {
                    svc.in_flight.push(log.wal(), t, journal);
                }
                conn.logged = Logged::merge(conn.logged, logged);
                settle(logged);
                super::snapshot::compact_if_due(log, &self.ks, svc.limits.max_args);
                Ok(())
            }
            Err(e) => {
                // Applied, not logged: taken back before anyone sees it
                // (the pops served here too: they wait on), newest first:
                // this group, then every write before it still
                // uncommitted, so that none brings back an older one.
                journal.undo(&mut self.ks);
                svc.in_flight.settle(log, &mut self.ks);
                svc.blocked.unclaim(&claimed);
                Err(e)
            }
        }
    }
}

/// How a write run alone is taken back if its record never commits
/// (`always`): every write command of the table says one (a test checks
/// that each does), so that none is applied without its undo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Undoes {
    /// A write of the fast path (DEL, INCR, MSET, the pushes and pops),
    /// run alone in a transaction or behind a waiting pop: its undo is
    /// the fast path's ([`super::undo::of`]).
    Keys,
    /// Its keys' deadlines are kept before it runs, and its family
    /// records, as it changes them, what takes its changes back: the
    /// members SADD added, the element LMOVE moved, the fields HSET
    /// replaced, the old length and overwritten bytes of an APPEND or a
    /// SETRANGE, the elements LREM removed and where, the value a SET or
    /// an UNLINK moved out (costing what the write changed, not the
    /// whole value).
    Own,
    /// Its keys' deadlines are kept: it changes nothing else (but an
    /// EXPIRE or a GETEX into the past, which deletes the key: its family
    /// keeps the value it takes out).
    Deadlines,
    /// The databases' store objects are kept (FLUSHALL and FLUSHDB
    /// replace them with empty ones under a log, SWAPDB swaps them):
    /// sixteen pointers, whatever they hold.
    Databases,
    /// It changes no data (a read; FUNCTION FLUSH, there being no
    /// functions; EXEC, whose commands each say).
    Nothing,
}

/// How `name` is taken back (see [`Undoes`]).
pub(crate) fn undoes(name: Name) -> Undoes {
    use Name::*;
    match name {
        Del | Incr | Decr | IncrBy | DecrBy | MSet | LPush | RPush | LPop | RPop => Undoes::Keys,
        Set | GetDel | GetSet | SetNx | SetEx | PSetEx | MSetNx | SetRange | Append
        | IncrByFloat | SetBit | LRem | LTrim | LInsert | Unlink | Restore | SAdd | SRem | SPop
        | HSet | HMSet | HDel | HIncrBy | LMove | RPopLPush | BLMove | BRPopLPush | LSet
        | LPushX | RPushX | LMPop | BLMPop | BLPop | BRPop | Rename | RenameNx | Copy | Move
        | Sort | ZAdd | ZRem | ZPopMin | SMove | SInterStore | SUnionStore | SDiffStore
        | HSetNx | HIncrByFloat | ZPopMax | ZIncrBy | ZRangeStore | ZRemRangeByScore
        | ZRemRangeByRank | ZRemRangeByLex | ZMPop | ZUnionStore | ZInterStore | ZDiffStore
        | BZPopMin | BZPopMax | BZMPop | GeoAdd => Undoes::Own,
        GetEx | Expire | PExpire | ExpireAt | PExpireAt | Persist => Undoes::Deadlines,
        FlushAll | FlushDb | SwapDb => Undoes::Databases,
        Function | Exec => Undoes::Nothing,
        // The reads: every name is here, so that a command added to the
        // table without saying how it is taken back does not compile.
        Ping | Echo | Get | Exists | MGet | LLen | LIndex | LRange | DbSize | Select | Info
        | Command | Config | Client | Hello | Quit | Reset | GetRange | Substr | StrLen
        | GetBit | Lcs | LPos | Keys | Scan | RandomKey | Type | Touch | Ttl | PTtl
        | ExpireTime | PExpireTime | Multi | Discard | Watch | Unwatch | Object | Time | Dump
        | SIsMember | SMembers | SCard | SRandMember | HGet | HMGet | HGetAll | HLen | HExists
        | ZScore | ZCard | ZRange | SMIsMember | SInter | SInterCard | SUnion | SDiff | HStrLen
        | HKeys | HVals | HRandField | Memory | ZRevRange | ZRangeByScore | ZRevRangeByScore
        | ZRangeByLex | ZRevRangeByLex | ZCount | ZLexCount | ZRank | ZRevRank | ZMScore
        | ZRandMember | ZUnion | ZInter | ZDiff | ZInterCard | SScan | HScan | ZScan | SortRo
        | Subscribe | Unsubscribe | PSubscribe | PUnsubscribe | Publish | PubSub | Monitor => {
            Undoes::Nothing
        }
    }
}

/// Runs one command beyond the fast path alone, and appends its reply.
pub(crate) fn run(
    svc: &RespService,
    conn: &mut RespConn,
    cmd: Cmd,
    input: &[u8],
    out: &mut Vec<u8>,
) {
    let mut al = Alone::begin(svc);
    let mut reply = Vec::new();
    al.one(svc, conn, cmd, input, &mut reply, false);
    match al.finish(svc, conn) {
        Ok(()) => out.extend_from_slice(&reply),
        Err(e) => svc.refused(e, out),
    }
}

/// The keys a command names in its database whose role (in its row's
/// key spec: [`Name::facts`]) is `wanted`; `None`: every key (a command
/// whose row says [`Flags::ALL_KEYS`]: FLUSHALL, SWAPDB, KEYS, …). Keys
/// it computes as it runs are not among them ([`Running::read_computed`]).
pub(crate) fn keys_of<'a>(
    name: Name,
    a: &Args<'a>,
    wanted: impl Fn(Role) -> bool,
) -> Option<Vec<&'a [u8]>> {
    let facts = name.facts();
    if facts.has(Flags::ALL_KEYS) {
        return None;
    }
    let mut keys = Vec::new();
    facts.each_key(
        a.count(),
        |i| a.arg(i),
        |i, role| {
            if wanted(role) {
                keys.push(a.arg(i))
            }
        },
    );
    Some(keys)
}

/// `SELECT db` as a command.
fn select(rec: &mut Vec<u8>, db: usize) {
    command(rec, &[b"SELECT", db.to_string().as_bytes()]);
}

/// What a fast-path write's record starts with: a `SELECT` outside
/// database 0 (a record replays from database 0).
pub(crate) fn select_prefix(rec: &mut Vec<u8>, db: usize) {
    if db != 0 {
        select(rec, db);
    }
}

/// The family that serves `name`, as its row says.
fn dispatch(name: Name, a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    match name.facts().family {
        Family::Strings => strings::run(name, a, cx, out),
        Family::Lists => lists::run(name, a, cx, out),
        Family::Keys => keys::run(name, a, cx, out),
        Family::Colls => colls::run(name, a, cx, out),
        Family::Sort => sort::run(a, cx, out),
        Family::Dump => dump::run(name, a, cx, out),
        Family::Server => server::run(name, a, cx, out),
        // UNWATCH queued in a transaction (the others are refused while
        // one is open): EXEC forgot every watch as it began, as Redis's.
        Family::Transaction if name == Name::Unwatch => reply::ok(out),
        Family::Fast | Family::Transaction | Family::PubSub => {
            unreachable!("{name:?} is not run alone")
        }
    }
}
