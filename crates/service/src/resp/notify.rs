//! Keyspace notifications, as Redis 7.0 publishes them
//! (docs/protocols/resp.md §5.2.6): with `notify-keyspace-events` set,
//! each change a write makes is published on `__keyspace@<db>__:<key>`
//! (the message: the event's name) and `__keyevent@<db>__:<event>` (the
//! message: the key), through PUBLISH's path.
//!
//! The flags are Redis's letters ([`parse`], [`print`]); while none is
//! set a write pays one atomic load. Which events a command emits is in
//! one place, [`events`]: a function of the command's name, its
//! arguments, its reply and which of its keys existed before and after
//! it ran, in the order Redis emits them (a key created first: `new`).
//! Keys that expire are `expired` ([`expired`]). What a command alone
//! (or a transaction) emits is published once the group is applied and
//! its record accepted by the log: a write the log refused notifies no
//! one.

use super::pubsub::PubSub;
use super::Args;
use serverlab_proto::resp::Name;
use std::sync::atomic::Ordering;

/// `K`: `__keyspace@<db>__:<key>` channels.
pub(crate) const KEYSPACE: u32 = 1 << 0;
/// `E`: `__keyevent@<db>__:<event>` channels.
pub(crate) const KEYEVENT: u32 = 1 << 1;
/// `g`: DEL, EXPIRE, RENAME, … (not of one type).
pub(crate) const GENERIC: u32 = 1 << 2;
/// `$`: the string commands.
pub(crate) const STRING: u32 = 1 << 3;
/// `l`: the list commands.
pub(crate) const LIST: u32 = 1 << 4;
/// `s`: the set commands.
pub(crate) const SET: u32 = 1 << 5;
/// `h`: the hash commands.
pub(crate) const HASH: u32 = 1 << 6;
/// `z`: the sorted-set commands.
pub(crate) const ZSET: u32 = 1 << 7;
/// `x`: a key expired.
pub(crate) const EXPIRED: u32 = 1 << 8;
/// `e`: a key evicted (never here: nothing is evicted).
pub(crate) const EVICTED: u32 = 1 << 9;
/// `t`: the stream commands (not served).
pub(crate) const STREAM: u32 = 1 << 10;
/// `m`: a key missed (accepted and shown; not published here).
pub(crate) const KEY_MISS: u32 = 1 << 11;
/// `d`: modules' events (there are no modules).
pub(crate) const MODULE: u32 = 1 << 13;
/// `n`: a key created.
pub(crate) const NEW: u32 = 1 << 14;
/// `A`: every class but `m` and `n`.
pub(crate) const ALL: u32 =
    GENERIC | STRING | LIST | SET | HASH | ZSET | EXPIRED | EVICTED | STREAM | MODULE;

/// The flags a `notify-keyspace-events` value sets (Redis's
/// `keyspaceEventsStringToFlags`); `None` for a letter it does not know.
pub(crate) fn parse(s: &[u8]) -> Option<u32> {
    s.iter().try_fold(0, |flags, c| {
        Some(
            flags
                | match c {
                    b'A' => ALL,
                    b'g' => GENERIC,
                    b'$' => STRING,
                    b'l' => LIST,
                    b's' => SET,
                    b'h' => HASH,
                    b'z' => ZSET,
                    b'x' => EXPIRED,
                    b'e' => EVICTED,
                    b'K' => KEYSPACE,
                    b'E' => KEYEVENT,
                    b't' => STREAM,
                    b'm' => KEY_MISS,
                    b'd' => MODULE,
                    b'n' => NEW,
                    _ => return None,
                },
        )
    })
}

/// The flags as CONFIG GET shows them (Redis's
/// `keyspaceEventsFlagsToString`): the classes (`A` for all of them),
/// then `K`, `E`, `m`.
pub(crate) fn print(flags: u32) -> String {
    let mut s = String::new();
    if flags & ALL == ALL {
        s.push('A');
    } else {
        let classes = [
            (GENERIC, 'g'),
            (STRING, '$'),
            (LIST, 'l'),
            (SET, 's'),
            (HASH, 'h'),
            (ZSET, 'z'),
            (EXPIRED, 'x'),
            (EVICTED, 'e'),
            (STREAM, 't'),
            (MODULE, 'd'),
            (NEW, 'n'),
        ];
        s.extend(
            classes
                .iter()
                .filter(|(f, _)| flags & f != 0)
                .map(|(_, c)| c),
        );
    }
    for (f, c) in [(KEYSPACE, 'K'), (KEYEVENT, 'E'), (KEY_MISS, 'm')] {
        if flags & f != 0 {
            s.push(c);
        }
    }
    s
}

/// CONFIG SET's error for a letter [`parse`] does not know.
pub(crate) const INVALID: &str = "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.";

/// One event: its class, its name, and the key (of database `db`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Note {
    pub class: u32,
    pub event: &'static str,
    pub db: usize,
    pub key: Box<[u8]>,
}

impl PubSub {
    /// The flags set: 0 while notifications are off.
    pub(crate) fn events(&self) -> u32 {
        self.notify.load(Ordering::Relaxed)
    }

    pub(crate) fn set_events(&self, flags: u32) {
        self.notify.store(flags, Ordering::Relaxed)
    }

    /// Publishes `notes`, each on the channels the flags ask for (Redis's
    /// `notifyKeyspaceEvent`), in order.
    pub(crate) fn notify(&self, notes: &[Note]) {
        let flags = self.events();
        for n in notes.iter().filter(|n| flags & n.class != 0) {
            if flags & KEYSPACE != 0 {
                let mut chan = format!("__keyspace@{}__:", n.db).into_bytes();
                chan.extend_from_slice(&n.key);
                self.publish(&chan, n.event.as_bytes());
            }
            if flags & KEYEVENT != 0 {
                let chan = format!("__keyevent@{}__:{}", n.db, n.event);
                self.publish(chan.as_bytes(), &n.key);
            }
        }
    }

    /// Keys of database `db` deleted past their deadline: `expired`.
    pub(crate) fn expired<'k>(&self, db: usize, keys: impl IntoIterator<Item = &'k [u8]>) {
        if self.events() & EXPIRED == 0 {
            return;
        }
        let notes: Vec<Note> = keys
            .into_iter()
            .map(|k| note(EXPIRED, "expired", db, k))
            .collect();
        self.notify(&notes);
    }
}

impl Note {
    /// Key `key` of database `db` expired.
    pub(crate) fn expired(db: usize, key: &[u8]) -> Note {
        note(EXPIRED, "expired", db, key)
    }
}

fn note(class: u32, event: &'static str, db: usize, key: &[u8]) -> Note {
    Note {
        class,
        event,
        db,
        key: key.into(),
    }
}

/// Which of a command's keys existed before it ran (taken only while
/// notifications are on).
#[derive(Default)]
pub(crate) struct Before {
    keys: Vec<(Box<[u8]>, bool)>,
}

impl Before {
    pub(crate) fn of<'k>(
        store: &dyn serverlab_store::resp::RespStore,
        keys: impl IntoIterator<Item = &'k [u8]>,
    ) -> Before {
        Before {
            keys: keys
                .into_iter()
                .map(|k| (k.into(), store.exists(k)))
                .collect(),
        }
    }

    fn existed(&self, key: &[u8]) -> bool {
        self.keys.iter().any(|(k, e)| **k == *key && *e)
    }
}

/// What one command did, for [`events`].
pub(crate) struct Ran<'a, 'k> {
    pub name: Name,
    pub a: &'a Args<'k>,
    pub db: usize,
    pub reply: &'a [u8],
    pub before: &'a Before,
    /// Whether a key of database `db` exists now.
    pub exists: &'a dyn Fn(&[u8]) -> bool,
    /// Keys it names as written but left as they were (SMOVE's
    /// destination that had the member).
    pub spared: &'a [Box<[u8]>],
}

impl Ran<'_, '_> {
    fn gone(&self, key: &[u8]) -> bool {
        self.before.existed(key) && !(self.exists)(key)
    }

    fn created(&self, key: &[u8]) -> bool {
        !self.before.existed(key) && (self.exists)(key)
    }
}

/// The events a command that wrote emits, in Redis's order (its
/// `notifyKeyspaceEvent` calls in t_string.c, t_list.c, t_set.c,
/// t_zset.c, t_hash.c, db.c, expire.c and sort.c), appended to `notes`.
pub(crate) fn events(r: &Ran, notes: &mut Vec<Note>) {
    let start = notes.len();
    let mut mine = Vec::new();
    command_events(r, &mut mine);
    // A key created is `new` before its first event (Redis's dbAdd); the
    // key RENAME, COPY, MOVE or RESTORE writes is added (before any of
    // its events) even where one was there before, deleted first.
    let added = matches!(
        r.name,
        Name::Rename | Name::RenameNx | Name::Copy | Name::Move | Name::Restore
    );
    let mut news: Vec<Box<[u8]>> = Vec::new();
    for n in mine {
        let is_new = if added {
            matches!(n.event, "rename_to" | "copy_to" | "move_to" | "restore")
        } else {
            n.db == r.db && n.event != "del" && r.created(&n.key)
        };
        if is_new && !news.contains(&n.key) {
            news.push(n.key.clone());
            let new = note(NEW, "new", n.db, &n.key);
            if added {
                notes.insert(start, new);
            } else {
                notes.push(new);
            }
        }
        notes.push(n);
    }
}

/// One class and name for a command that changes one key (argument 1),
/// and whether it is `del` once that leaves the key empty.
fn simple(name: Name) -> Option<(u32, &'static str, bool)> {
    use Name::*;
    Some(match name {
        Set | SetNx | GetSet | SetEx | PSetEx => (STRING, "set", false),
        SetRange => (STRING, "setrange", false),
        Append => (STRING, "append", false),
        Incr | Decr | IncrBy | DecrBy => (STRING, "incrby", false),
        IncrByFloat => (STRING, "incrbyfloat", false),
        SetBit => (STRING, "setbit", false),
        GetDel => (GENERIC, "del", false),
        Persist => (GENERIC, "persist", false),
        Restore => (GENERIC, "restore", false),
        LPush | LPushX => (LIST, "lpush", false),
        RPush | RPushX => (LIST, "rpush", false),
        LPop => (LIST, "lpop", true),
        RPop => (LIST, "rpop", true),
        LInsert => (LIST, "linsert", false),
        LSet => (LIST, "lset", false),
        LTrim => (LIST, "ltrim", true),
        LRem => (LIST, "lrem", true),
        SAdd => (SET, "sadd", false),
        SRem => (SET, "srem", true),
        SPop => (SET, "spop", true),
        HSet | HMSet | HSetNx => (HASH, "hset", false),
        HIncrBy => (HASH, "hincrby", false),
        HIncrByFloat => (HASH, "hincrbyfloat", false),
        HDel => (HASH, "hdel", true),
        ZIncrBy => (ZSET, "zincr", false),
        GeoAdd => (ZSET, "zadd", false),
        ZRem => (ZSET, "zrem", true),
        ZRemRangeByScore => (ZSET, "zremrangebyscore", true),
        ZRemRangeByRank => (ZSET, "zremrangebyrank", true),
        ZRemRangeByLex => (ZSET, "zremrangebylex", true),
        ZPopMin => (ZSET, "zpopmin", true),
        ZPopMax => (ZSET, "zpopmax", true),
        _ => return None,
    })
}

/// The event of a command that stores its result in a destination
/// (argument `at`): `del` when the result was empty.
fn store(name: Name) -> Option<(u32, &'static str, usize)> {
    use Name::*;
    Some(match name {
        SInterStore => (SET, "sinterstore", 1),
        SUnionStore => (SET, "sunionstore", 1),
        SDiffStore => (SET, "sdiffstore", 1),
        ZUnionStore => (ZSET, "zunionstore", 1),
        ZInterStore => (ZSET, "zinterstore", 1),
        ZDiffStore => (ZSET, "zdiffstore", 1),
        ZRangeStore => (ZSET, "zrangestore", 1),
        _ => return None,
    })
}

fn command_events(r: &Ran, notes: &mut Vec<Note>) {
    let (a, db) = (r.a, r.db);
    if let Some((class, event, emptied)) = simple(r.name) {
        let key = a.arg(1);
        notes.push(note(class, event, db, key));
        if emptied && r.gone(key) {
            notes.push(note(GENERIC, "del", db, key));
        }
        let deadline = [&b"EX"[..], b"PX", b"EXAT", b"PXAT"];
        let set_deadline = r.name == Name::Set
            && a.from(3)
                .any(|x| deadline.iter().any(|d| x.eq_ignore_ascii_case(d)));
        if matches!(r.name, Name::SetEx | Name::PSetEx) || set_deadline {
            notes.push(note(GENERIC, "expire", db, key));
        }
        return;
    }
    if let Some((class, event, at)) = store(r.name) {
        let key = a.arg(at);
        if (r.exists)(key) {
            notes.push(note(class, event, db, key));
        } else if r.before.existed(key) {
            notes.push(note(GENERIC, "del", db, key));
        }
        return;
    }
    others(r, notes);
}

/// An argument, upper case.
fn upper(a: &Args, i: usize) -> Vec<u8> {
    a.try_arg(i).unwrap_or_default().to_ascii_uppercase()
}

fn others(r: &Ran, notes: &mut Vec<Note>) {
    let (a, db) = (r.a, r.db);
    match r.name {
        Name::Del | Name::Unlink => {
            for k in a.from(1).filter(|k| r.gone(k)) {
                if !notes.iter().any(|n| *n.key == *k) {
                    notes.push(note(GENERIC, "del", db, k));
                }
            }
        }
        Name::MSet | Name::MSetNx => {
            let keys: Vec<&[u8]> = a.from(1).step_by(2).collect();
            keys.iter()
                .for_each(|k| notes.push(note(STRING, "set", db, k)));
        }
        Name::GetEx | Name::Expire | Name::PExpire | Name::ExpireAt | Name::PExpireAt => {
            let key = a.arg(1);
            let persist =
                r.name == Name::GetEx && a.from(2).any(|x| x.eq_ignore_ascii_case(b"PERSIST"));
            // A deadline already past deletes the key.
            let event = match () {
                _ if r.gone(key) => "del",
                _ if persist => "persist",
                _ => "expire",
            };
            notes.push(note(GENERIC, event, db, key));
        }
        Name::Rename | Name::RenameNx => {
            notes.push(note(GENERIC, "rename_from", db, a.arg(1)));
            notes.push(note(GENERIC, "rename_to", db, a.arg(2)));
        }
        Name::Copy => {
            let to = copy_db(a).unwrap_or(db);
            notes.push(note(GENERIC, "copy_to", to, a.arg(2)));
        }
        Name::Move => {
            let to = std::str::from_utf8(a.arg(2))
                .ok()
                .and_then(|s| s.parse().ok());
            notes.push(note(GENERIC, "move_from", db, a.arg(1)));
            notes.push(note(GENERIC, "move_to", to.unwrap_or(db), a.arg(1)));
        }
        Name::Sort => sort_events(r, notes),
        Name::ZAdd => notes.push(note(ZSET, zadd_event(a), db, a.arg(1))),
        Name::SMove => smove(r, notes),
        Name::LMove | Name::BLMove | Name::RPopLPush | Name::BRPopLPush => moves(r, notes),
        _ => pops(r, notes),
    }
}

/// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member …: `zincr` with
/// INCR.
fn zadd_event(a: &Args) -> &'static str {
    let options = [&b"NX"[..], b"XX", b"GT", b"LT", b"CH", b"INCR"];
    let incr = a
        .from(2)
        .take_while(|x| options.iter().any(|o| x.eq_ignore_ascii_case(o)))
        .any(|x| x.eq_ignore_ascii_case(b"INCR"));
    if incr {
        "zincr"
    } else {
        "zadd"
    }
}

/// SMOVE src dst member: `srem` (and `del` if emptied), then `sadd`
/// unless the destination had the member.
fn smove(r: &Ran, notes: &mut Vec<Note>) {
    let (src, dst) = (r.a.arg(1), r.a.arg(2));
    notes.push(note(SET, "srem", r.db, src));
    if r.gone(src) {
        notes.push(note(GENERIC, "del", r.db, src));
    }
    if !r.spared.iter().any(|s| **s == *dst) {
        notes.push(note(SET, "sadd", r.db, dst));
    }
}

/// COPY's `DB n`, if given.
fn copy_db(a: &Args) -> Option<usize> {
    let at = (3..a.count()).find(|&i| a.arg(i).eq_ignore_ascii_case(b"DB"))?;
    std::str::from_utf8(a.try_arg(at + 1)?).ok()?.parse().ok()
}

/// SORT … STORE dst: `sortstore`, or `del` for an empty result.
fn sort_events(r: &Ran, notes: &mut Vec<Note>) {
    let a = r.a;
    let Some(at) = (2..a.count()).find(|&i| a.arg(i).eq_ignore_ascii_case(b"STORE")) else {
        return;
    };
    let Some(key) = a.try_arg(at + 1) else { return };
    if (r.exists)(key) {
        notes.push(note(LIST, "sortstore", r.db, key));
    } else if r.before.existed(key) {
        notes.push(note(GENERIC, "del", r.db, key));
    }
}

/// A pop's event on `key`, and `del` if that emptied it.
fn pop(r: &Ran, notes: &mut Vec<Note>, class: u32, event: &'static str, key: &[u8]) {
    notes.push(note(class, event, r.db, key));
    if r.gone(key) {
        notes.push(note(GENERIC, "del", r.db, key));
    }
}

/// The event of the end named by `word` (`LEFT`/`MIN`: the first).
fn end(word: Vec<u8>, left: &'static str, right: &'static str) -> &'static str {
    if word == b"LEFT" || word == b"MIN" {
        left
    } else {
        right
    }
}

/// LMOVE and RPOPLPUSH (and their blocking forms): the push on the
/// destination, then the pop of the source (as Redis's lmoveHandlePush
/// comes first).
fn moves(r: &Ran, notes: &mut Vec<Note>) {
    let a = r.a;
    let two = matches!(r.name, Name::LMove | Name::BLMove);
    let (from, to) = match two {
        true => (
            end(upper(a, 3), "lpop", "rpop"),
            end(upper(a, 4), "lpush", "rpush"),
        ),
        false => ("rpop", "lpush"),
    };
    notes.push(note(LIST, to, r.db, a.arg(2)));
    pop(r, notes, LIST, from, a.arg(1));
}

/// The pops that name several keys: the one popped is in the reply.
fn pops(r: &Ran, notes: &mut Vec<Note>) {
    let a = r.a;
    let Some(key) = first_bulk(r.reply) else {
        return;
    };
    let (class, event) = match r.name {
        Name::BLPop => (LIST, "lpop"),
        Name::BRPop => (LIST, "rpop"),
        Name::BZPopMin => (ZSET, "zpopmin"),
        Name::BZPopMax => (ZSET, "zpopmax"),
        Name::LMPop | Name::BLMPop | Name::ZMPop | Name::BZMPop => {
            // [timeout] numkeys key … LEFT|RIGHT|MIN|MAX
            let first = if matches!(r.name, Name::LMPop | Name::ZMPop) {
                1
            } else {
                2
            };
            let n: usize = std::str::from_utf8(a.arg(first))
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            let word = upper(a, first + 1 + n);
            match r.name {
                Name::LMPop | Name::BLMPop => (LIST, end(word, "lpop", "rpop")),
                _ => (ZSET, end(word, "zpopmin", "zpopmax")),
            }
        }
        _ => return,
    };
    pop(r, notes, class, event, key);
}

/// The first bulk string of a reply (the key a multi-key pop popped):
/// after the aggregate's header.
fn first_bulk(reply: &[u8]) -> Option<&[u8]> {
    let line = |s: &[u8]| s.windows(2).position(|w| w == b"\r\n");
    let mut rest = reply;
    if matches!(rest.first(), Some(b'*' | b'>' | b'~')) {
        rest = &rest[line(rest)? + 2..];
    }
    let rest = rest.strip_prefix(b"$")?;
    let end = line(rest)?;
    let len: usize = std::str::from_utf8(&rest[..end]).ok()?.parse().ok()?;
    rest.get(end + 2..end + 2 + len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_parse_and_print_as_redis_does() {
        for (set, shown) in [
            ("gKE", "gKE"),
            ("$lshzxeKE", "$lshzxeKE"),
            ("KA", "AK"),
            ("EA", "AE"),
            ("", ""),
            ("nE", "nE"),
            ("AnKEm", "AKEm"),
            ("Ex", "xE"),
            ("Kgd$", "g$dK"),
        ] {
            let flags = parse(set.as_bytes()).expect(set);
            assert_eq!(print(flags), shown, "{set}");
        }
        // `A` is every class but `m` and `n`.
        assert_eq!(parse(b"A"), parse(b"g$lshzxetd"));
        assert_eq!(print(parse(b"g$lshzxetd").unwrap()), "A");
    }

    #[test]
    fn an_unknown_letter_is_refused() {
        for bad in ["KEq", "a", "K E", "X"] {
            assert_eq!(parse(bad.as_bytes()), None, "{bad}");
        }
    }

    #[test]
    fn the_first_bulk_of_a_pop_reply_is_the_key() {
        assert_eq!(
            first_bulk(b"*2\r\n$4\r\nlist\r\n$1\r\na\r\n"),
            Some(&b"list"[..])
        );
        assert_eq!(first_bulk(b"*-1\r\n"), None);
        assert_eq!(first_bulk(b"$3\r\nkey\r\n"), Some(&b"key"[..]));
    }
}
