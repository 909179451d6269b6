//! Seeded random RESP commands from every family: strings, lists, sets,
//! hashes, sorted sets, the keyspace (RENAME, COPY, MOVE, SWAPDB,
//! deadlines relative and absolute), SORT … STORE, DUMP and RESTORE,
//! transactions (MULTI/EXEC, WATCH, DISCARD) and blocking pops.
//!
//! Commands whose effect or reply is random or unordered (SPOP,
//! SRANDMEMBER, RANDOMKEY, SMEMBERS, HGETALL, KEYS, TIME, CLIENT ID) are
//! left out: the simulation compares each reply with its model's, byte
//! for byte. Blocking pops wait for ever (timeout 0): a timeout would
//! be the machine's clock, not the simulation's.

use fastrand::Rng;

/// The databases the commands use (SELECT, MOVE, COPY … DB, SWAPDB).
pub const DBS: usize = 3;

/// A request's arguments.
pub type Args = Vec<Vec<u8>>;

const STRINGS: &[&str] = &["s0", "s1", "s2", "n0"];
const LISTS: &[&str] = &["l0", "l1", "l2"];
const SETS: &[&str] = &["S0", "S1"];
const HASHES: &[&str] = &["h0", "h1"];
const ZSETS: &[&str] = &["z0", "z1"];
const VALUES: &[&str] = &["a", "b", "c", "1", "7"];

/// What a command's arguments are drawn from.
pub struct Gen<'a> {
    pub rng: &'a mut Rng,
    /// The simulated clock, for absolute deadlines near it.
    pub now: i64,
    /// DUMP payloads of one value of each type, for RESTORE.
    pub payloads: &'a [Vec<u8>],
}

fn args(words: &[&str]) -> Args {
    words.iter().map(|w| w.as_bytes().to_vec()).collect()
}

impl Gen<'_> {
    fn pick<'s>(&mut self, from: &[&'s str]) -> &'s str {
        from[self.rng.usize(..from.len())]
    }

    /// Any key: mostly of its family's pool, sometimes another's.
    fn any_key(&mut self) -> &'static str {
        let pools: [&[&'static str]; 5] = [STRINGS, LISTS, SETS, HASHES, ZSETS];
        let pool = pools[self.rng.usize(..pools.len())];
        self.pick(pool)
    }

    fn key(&mut self, pool: &[&'static str]) -> &'static str {
        if self.rng.u8(..10) == 0 {
            self.any_key()
        } else {
            self.pick(pool)
        }
    }

    fn val(&mut self) -> &'static str {
        self.pick(VALUES)
    }

    /// Milliseconds from now: mostly within the clock's next steps.
    fn ms(&mut self) -> String {
        self.rng.i64(1..1500).to_string()
    }

    /// An absolute deadline near now (sometimes just past).
    fn at_ms(&mut self) -> String {
        (self.now + self.rng.i64(-300..1500)).to_string()
    }

    fn db(&mut self) -> String {
        self.rng.usize(..DBS).to_string()
    }

    /// A client's next requests: one command, or a transaction's.
    pub fn next(&mut self) -> Vec<Args> {
        match self.rng.u8(..100) {
            0..=6 => self.transaction(),
            7..=11 => vec![self.blocking()],
            _ => vec![self.single()],
        }
    }

    /// One command that does not block (nor opens a transaction).
    pub fn single(&mut self) -> Args {
        match self.rng.u8(..100) {
            0..=21 => self.string(),
            22..=39 => self.list(),
            40..=48 => self.set(),
            49..=56 => self.hash(),
            57..=64 => self.zset(),
            65..=84 => self.keyspace(),
            85..=89 => self.sort(),
            90..=94 => self.restore(),
            _ => self.server(),
        }
    }

    fn string(&mut self) -> Args {
        let k = self.key(STRINGS);
        let v = self.val();
        let (ms, at) = (self.ms(), self.at_ms());
        let k2 = self.key(STRINGS);
        match self.rng.u8(..20) {
            0 => args(&["SET", k, v]),
            1 => args(&["SET", k, v, "PX", &ms]),
            2 => args(&["SET", k, v, "PXAT", &at]),
            3 => args(&["SET", k, v, "NX"]),
            4 => args(&["SET", k, v, "XX", "KEEPTTL"]),
            5 => args(&["GET", k]),
            6 => args(&["INCR", "n0"]),
            7 => args(&["INCRBY", k, "3"]),
            8 => args(&["APPEND", k, v]),
            9 => args(&["GETDEL", k]),
            10 => args(&["GETEX", k, "PX", &ms]),
            11 => args(&["GETEX", k, "PERSIST"]),
            12 => args(&["SETRANGE", k, "1", v]),
            13 => args(&["MSET", k, v, k2, "b"]),
            14 => args(&["MGET", k, k2]),
            15 => args(&["DEL", k, k2]),
            16 => args(&["PSETEX", k, &ms, v]),
            17 => args(&["GETSET", k, v]),
            18 => args(&["INCRBYFLOAT", "n0", "1.5"]),
            _ => args(&["EXISTS", k, k2]),
        }
    }

    fn list(&mut self) -> Args {
        let k = self.key(LISTS);
        let k2 = self.key(LISTS);
        let (v, w) = (self.val(), self.val());
        match self.rng.u8(..18) {
            0 | 1 => args(&["LPUSH", k, v, w]),
            2 | 3 => args(&["RPUSH", k, v]),
            4 => args(&["LPOP", k]),
            5 => args(&["RPOP", k, "2"]),
            6 => args(&["LRANGE", k, "0", "-1"]),
            7 => args(&["LLEN", k]),
            8 => args(&["LMOVE", k, k2, "LEFT", "RIGHT"]),
            9 => args(&["RPOPLPUSH", k, k2]),
            10 => args(&["LSET", k, "0", v]),
            11 => args(&["LTRIM", k, "0", "2"]),
            12 => args(&["LINSERT", k, "BEFORE", v, w]),
            13 => args(&["LREM", k, "0", v]),
            14 => args(&["LPUSHX", k, v]),
            15 => args(&["RPUSHX", k, v]),
            16 => args(&["LMPOP", "2", k, k2, "LEFT", "COUNT", "2"]),
            _ => args(&["LINDEX", k, "0"]),
        }
    }

    fn set(&mut self) -> Args {
        let k = self.key(SETS);
        let (v, w) = (self.val(), self.val());
        match self.rng.u8(..6) {
            0 | 1 => args(&["SADD", k, v, w]),
            2 => args(&["SREM", k, v]),
            3 => args(&["SISMEMBER", k, v]),
            4 => args(&["SCARD", k]),
            _ => args(&["SORT", k, "ALPHA"]),
        }
    }

    fn hash(&mut self) -> Args {
        let k = self.key(HASHES);
        let (f, g) = (self.pick(&["f", "g", "cnt"]), self.pick(&["f", "g"]));
        let v = self.val();
        match self.rng.u8(..7) {
            0 | 1 => args(&["HSET", k, f, v, g, "x"]),
            2 => args(&["HDEL", k, f]),
            3 => args(&["HINCRBY", k, "cnt", "2"]),
            4 => args(&["HGET", k, f]),
            5 => args(&["HLEN", k]),
            _ => args(&["HMGET", k, f, g]),
        }
    }

    fn zset(&mut self) -> Args {
        let k = self.key(ZSETS);
        let m = self.val();
        let score = self.rng.u8(..9).to_string();
        match self.rng.u8(..6) {
            0 | 1 => args(&["ZADD", k, &score, m]),
            2 => args(&["ZREM", k, m]),
            3 => args(&["ZSCORE", k, m]),
            4 => args(&["ZRANGE", k, "0", "-1", "WITHSCORES"]),
            _ => args(&["ZPOPMIN", k]),
        }
    }

    fn keyspace(&mut self) -> Args {
        let (a, b) = (self.any_key(), self.any_key());
        let (ms, at, db) = (self.ms(), self.at_ms(), self.db());
        let secs = self.rng.u8(1..3).to_string();
        match self.rng.u8(..17) {
            0 => args(&["RENAME", a, b]),
            1 => args(&["RENAMENX", a, b]),
            2 => args(&["COPY", a, b, "REPLACE"]),
            3 => args(&["COPY", a, b, "DB", &db]),
            4 => args(&["MOVE", a, &db]),
            5 => args(&["UNLINK", a, b]),
            6 => args(&["TYPE", a]),
            7 => args(&["EXPIRE", a, &secs]),
            8 | 9 => args(&["PEXPIRE", a, &ms]),
            10 => args(&["PEXPIREAT", a, &at]),
            11 => args(&["PERSIST", a]),
            12 => args(&["PTTL", a]),
            13 => args(&["PEXPIRETIME", a]),
            14 => args(&["EXPIRE", a, "-1"]),
            15 => args(&["PEXPIRE", a, &ms, "GT"]),
            _ => args(&["EXISTS", a]),
        }
    }

    fn sort(&mut self) -> Args {
        let src = self.key(&["l0", "l1", "S0", "S1"]);
        let dst = self.key(LISTS);
        match self.rng.u8(..3) {
            0 => args(&["SORT", src, "ALPHA", "STORE", dst]),
            1 => args(&[
                "SORT", src, "ALPHA", "DESC", "LIMIT", "0", "2", "STORE", dst,
            ]),
            _ => args(&["SORT", src, "ALPHA"]),
        }
    }

    fn restore(&mut self) -> Args {
        let k = self.any_key();
        let p = self.payloads[self.rng.usize(..self.payloads.len())].clone();
        let (ms, at) = (self.ms(), self.at_ms());
        let mut a = match self.rng.u8(..4) {
            0 => return args(&["DUMP", k]),
            1 => args(&["RESTORE", k, "0", "P", "REPLACE"]),
            2 => args(&["RESTORE", k, &ms, "P", "REPLACE"]),
            _ => args(&["RESTORE", k, &at, "P", "ABSTTL", "REPLACE"]),
        };
        a[3] = p;
        a
    }

    fn server(&mut self) -> Args {
        let db = self.db();
        match self.rng.u8(..10) {
            0..=4 => args(&["SELECT", &db]),
            5 | 6 => args(&["DBSIZE"]),
            7 | 8 => args(&["SWAPDB", "0", "1"]),
            _ => args(&["FLUSHDB"]),
        }
    }

    fn blocking(&mut self) -> Args {
        let (k, k2) = (self.pick(LISTS), self.pick(LISTS));
        match self.rng.u8(..5) {
            0 => args(&["BLPOP", k, k2, "0"]),
            1 => args(&["BRPOP", k, "0"]),
            2 => args(&["BLMOVE", k, k2, "RIGHT", "LEFT", "0"]),
            3 => args(&["BRPOPLPUSH", k, k2, "0"]),
            _ => args(&["BLMPOP", "0", "2", k, k2, "LEFT", "COUNT", "2"]),
        }
    }

    /// MULTI, a few commands (a blocking pop among them does not block),
    /// then EXEC (or DISCARD); sometimes after a WATCH.
    fn transaction(&mut self) -> Vec<Args> {
        let mut t = Vec::new();
        if self.rng.bool() {
            let k = self.any_key();
            t.push(args(&["WATCH", k]));
        }
        t.push(args(&["MULTI"]));
        for _ in 0..self.rng.usize(1..5) {
            let c = if self.rng.u8(..8) == 0 {
                self.blocking()
            } else {
                self.single()
            };
            t.push(c);
        }
        let end = if self.rng.u8(..8) == 0 {
            "DISCARD"
        } else {
            "EXEC"
        };
        t.push(args(&[end]));
        t
    }
}
