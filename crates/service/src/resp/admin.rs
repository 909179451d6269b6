//! The server's answers about itself: INFO's text, COMMAND's table, and
//! CONFIG GET's few parameters.

use super::Args;
use crate::Common;
use serverlab_proto::resp::command::CommandQuery;
use serverlab_proto::resp::name::{Access, Facts, Name};
use serverlab_proto::resp::{glob, reply};
use serverlab_util::server_stats::Connections;
use std::fmt::Write;

/// What INFO reports from.
pub(super) struct InfoFacts<'a> {
    /// Lower-cased; empty, `default`, `all` or `everything`: every section.
    pub sections: &'a [String],
    pub about: &'a str,
    pub common: &'a Common,
    /// Each database's keys.
    pub dbs: &'a [DbFacts],
    /// Connections blocked in a pop.
    pub blocked: usize,
    /// Channels with subscribers, and patterns subscribed to.
    pub pubsub: (usize, usize),
    pub stats: &'a super::stats::RespCounters,
    /// The write-ahead log, if the server keeps one.
    pub log: Option<&'a crate::Durable>,
}

/// One database, as INFO's `# Keyspace` shows it.
pub(super) struct DbFacts {
    pub keys: usize,
    pub expires: usize,
    pub avg_ttl: i64,
}

/// INFO's text: `# Server`, `# Clients`, `# Memory`, `# Persistence`,
/// `# Stats`, `# CPU`, `# Commandstats`, `# Errorstats` and `# Keyspace`,
/// `name:value` lines ending CR LF, sections apart by a blank line, as
/// Redis writes them. As Redis's, INFO alone (or `default`) leaves out
/// commandstats; `all` and `everything` give every section.
pub(super) fn info(f: &InfoFacts) -> String {
    let asked = |s: &str| f.sections.iter().any(|x| x == s);
    let default = f.sections.is_empty() || asked("default");
    let all = asked("all") || asked("everything");
    let want = |s: &str| all || (default && s != "commandstats") || asked(s);
    let conns = f.common.connections.snapshot();
    let rss = rss_bytes();
    let keyspace = f
        .dbs
        .iter()
        .enumerate()
        .filter(|(_, d)| d.keys > 0)
        .map(|(i, d)| {
            let v = format!(
                "keys={},expires={},avg_ttl={}",
                d.keys, d.expires, d.avg_ttl
            );
            (format!("db{i}"), v)
        })
        .collect::<Vec<_>>();
    let sections = [
        ("Server", server_lines(f, &conns)),
        (
            "Clients",
            vec![
                l(
                    "connected_clients",
                    f.common.connections.active().to_string(),
                ),
                l("peak_connected_clients", conns.peak_active.to_string()),
                l("blocked_clients", f.blocked.to_string()),
            ],
        ),
        (
            "Memory",
            vec![
                l("used_memory_rss", rss.to_string()),
                l("used_memory_rss_human", human(rss)),
            ],
        ),
        ("Persistence", persistence_lines(f.log)),
        ("Stats", stats_lines(f, &conns)),
        ("CPU", cpu_lines()),
        ("Commandstats", command_lines(f.stats)),
        ("Errorstats", error_lines(f.stats)),
        ("Keyspace", keyspace),
    ];
    let mut out = String::new();
    for (name, lines) in sections {
        if !want(&name.to_ascii_lowercase()) {
            continue;
        }
        if !out.is_empty() {
            out += "\r\n";
        }
        let _ = write!(out, "# {name}\r\n");
        for (k, v) in lines {
            let _ = write!(out, "{k}:{v}\r\n");
        }
    }
    out
}

type Line = (String, String);

/// `# Persistence`: whether a log is kept, in which mode, and whether its
/// last write failed (Redis's `aof_last_write_status:err`), naming the
/// file and the call.
fn persistence_lines(log: Option<&crate::Durable>) -> Vec<Line> {
    let Some(log) = log else {
        return vec![l("aof_enabled", "0".into())];
    };
    let mode = serverlab_util::Named::name(log.wal().durability());
    let failure = log.failure();
    let status = if failure.is_some() { "err" } else { "ok" };
    let why = failure.map_or(String::new(), |f| f.to_string().replace(['\r', '\n'], " "));
    vec![
        l("aof_enabled", "1".into()),
        l("serverlab_durability", mode.into()),
        l("aof_last_write_status", status.into()),
        l("serverlab_log_failure", why),
    ]
}

fn l(k: &str, v: String) -> Line {
    (k.into(), v)
}

fn server_lines(f: &InfoFacts, conns: &Connections) -> Vec<Line> {
    vec![
        l("redis_version", "7.0.0".into()),
        l("serverlab_version", env!("CARGO_PKG_VERSION").into()),
        l("serverlab_server", f.about.into()),
        l("redis_mode", "standalone".into()),
        l("os", std::env::consts::OS.into()),
        l("arch_bits", (usize::BITS).to_string()),
        l("process_id", std::process::id().to_string()),
        l("uptime_in_seconds", (conns.uptime_s as u64).to_string()),
        l(
            "uptime_in_days",
            (conns.uptime_s as u64 / 86_400).to_string(),
        ),
    ]
}

/// The connection counters and the service time, as every protocol's
/// final statistics have them.
fn stats_lines(f: &InfoFacts, conns: &Connections) -> Vec<Line> {
    let t = f.common.times.snapshot();
    vec![
        l("total_connections_received", conns.accepted.to_string()),
        l("total_commands_processed", t.count.to_string()),
        l(
            "rejected_connections",
            conns.refused_over_max_connections.to_string(),
        ),
        l("evicted_idle_connections", conns.evicted_idle.to_string()),
        l(
            "shed_out_of_fds_connections",
            conns.shed_out_of_fds.to_string(),
        ),
        l(
            "reset_write_timeout_connections",
            conns.reset_write_timeout.to_string(),
        ),
        l("service_time_timed", t.timed.to_string()),
        l("service_time_sampled_one_in", t.sampled_one_in.to_string()),
        l("service_time_timing", t.timing.clone()),
        l("service_time_us_mean", format!("{:.3}", t.mean)),
        l("service_time_us_p50", format!("{:.3}", t.p50)),
        l("service_time_us_p99", format!("{:.3}", t.p99)),
        l("service_time_us_max", format!("{:.3}", t.max)),
        l("pubsub_channels", f.pubsub.0.to_string()),
        l("pubsub_patterns", f.pubsub.1.to_string()),
        l("total_error_replies", f.stats.error_replies().to_string()),
        // MIGRATE is not served: no connection to another server is ever
        // cached (Redis's suite waits for this to be 0).
        l("migrate_cached_sockets", "0".to_string()),
    ]
}

/// `# CPU`: the process's and its children's system and user time
/// (`getrusage`), seconds to the microsecond, as Redis prints them.
fn cpu_lines() -> Vec<Line> {
    use nix::sys::resource::{getrusage, UsageWho};
    let secs = |t: nix::sys::time::TimeVal| format!("{}.{:06}", t.tv_sec(), t.tv_usec());
    let mut lines = Vec::new();
    for (who, suffix) in [
        (UsageWho::RUSAGE_SELF, ""),
        (UsageWho::RUSAGE_CHILDREN, "_children"),
    ] {
        let Ok(u) = getrusage(who) else { continue };
        lines.push(l(&format!("used_cpu_sys{suffix}"), secs(u.system_time())));
        lines.push(l(&format!("used_cpu_user{suffix}"), secs(u.user_time())));
    }
    lines
}

/// `# Commandstats`: a line per command called, refused or failed since
/// the start, as Redis 7.0 writes it. No time is kept per command, so
/// `usec` and `usec_per_call` are 0.
fn command_lines(stats: &super::stats::RespCounters) -> Vec<Line> {
    stats
        .command_calls()
        .into_iter()
        .map(|(name, calls, rejected, failed)| {
            let v = format!(
                "calls={calls},usec=0,usec_per_call=0.00,rejected_calls={rejected},failed_calls={failed}"
            );
            (format!("cmdstat_{name}"), v)
        })
        .collect()
}

/// `# Errorstats`: each kind of error replied (its first word), and how
/// many times.
fn error_lines(stats: &super::stats::RespCounters) -> Vec<Line> {
    stats
        .error_kinds()
        .into_iter()
        .map(|(kind, n)| {
            // As Redis's getSafeInfoString: no `#`, `:` or line break.
            let kind = kind.replace(['#', ':', '\n', '\r'], "_");
            (format!("errorstat_{kind}"), format!("count={n}"))
        })
        .collect()
}

/// The process's resident memory (Linux `/proc/self/statm`), 0 elsewhere.
fn rss_bytes() -> u64 {
    let page = 4096;
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * page)
}

fn human(bytes: u64) -> String {
    format!("{:.2}M", bytes as f64 / (1 << 20) as f64)
}

/// COMMAND, COMMAND COUNT, COMMAND DOCS (an empty array: no docs),
/// COMMAND INFO name…, COMMAND GETKEYS, COMMAND LIST.
pub(super) fn command(q: CommandQuery, a: &Args, out: &mut Vec<u8>) {
    match q {
        CommandQuery::GetKeys => getkeys(a, out),
        CommandQuery::List => list(a, out),
        CommandQuery::Count => reply::int(out, Name::listed().count() as i64),
        CommandQuery::Docs => reply::array(out, 0),
        CommandQuery::All => {
            reply::array(out, Name::listed().count());
            Name::listed().for_each(|n| details(out, n.facts()));
        }
        CommandQuery::Info => {
            reply::array(out, a.count() - 2);
            for n in a.from(2) {
                match Name::find(n).filter(|n| n.facts().listed) {
                    Some(n) => details(out, n.facts()),
                    None => reply::null(out),
                }
            }
        }
    }
}

/// One command's details as Redis 7 gives them: name, arity, flags, first
/// key, last key, step, ACL categories, tips, key specs, subcommands.
fn details(out: &mut Vec<u8>, facts: &Facts) {
    reply::array(out, 10);
    reply::bulk(out, facts.name.as_bytes());
    reply::int(out, facts.arity);
    let flag = match facts.access {
        Access::Write => &b"write"[..],
        Access::Read => b"readonly",
    };
    let movable = facts.movable_keys();
    reply::array(out, 1 + usize::from(movable));
    reply::simple(out, flag);
    if movable {
        reply::simple(out, b"movablekeys");
    }
    let keys = facts.legacy_keys();
    reply::int(out, keys.first);
    reply::int(out, keys.last);
    reply::int(out, keys.step);
    for _ in 0..4 {
        reply::array(out, 0);
    }
}

/// COMMAND GETKEYS command arg…: the keys `command arg…` names, with
/// Redis 7.0's checks in its order: the command (a container's
/// subcommand) is served, it has keys, its arity fits, its arguments
/// name some.
fn getkeys(a: &Args, out: &mut Vec<u8>) {
    let argc = a.count() - 2;
    let arg = |i: usize| a.arg(i + 2);
    let Some(name) = Name::find(arg(0)).filter(|n| n.facts().listed) else {
        return reply::error(out, "ERR Invalid command specified");
    };
    let facts = name.facts();
    let arity = if name.has_subcommands() && argc >= 2 {
        match name.subcommand(arg(1)) {
            Some((_, arity)) => arity,
            None => return reply::error(out, "ERR Invalid command specified"),
        }
    } else if name.has_subcommands() {
        // The container itself, which names no keys.
        return reply::error(out, "ERR The command has no key arguments");
    } else {
        facts.arity
    };
    if facts.keys.is_empty() {
        return reply::error(out, "ERR The command has no key arguments");
    }
    if !arity_fits(arity, argc) {
        return reply::error(out, "ERR Invalid number of arguments specified for command");
    }
    match facts.key_indices(argc, arg) {
        Some(keys) => {
            reply::array(out, keys.len());
            keys.into_iter().for_each(|i| reply::bulk(out, arg(i)));
        }
        None => reply::error(out, "ERR Invalid arguments specified for command"),
    }
}

fn arity_fits(arity: i64, argc: usize) -> bool {
    if arity >= 0 {
        argc as i64 == arity
    } else {
        argc as i64 >= -arity
    }
}

/// COMMAND LIST [FILTERBY MODULE m|ACLCAT c|PATTERN p]: every command
/// served and each subcommand served as `command|sub`, in the table's
/// order; PATTERN a glob over those names (any case), MODULE none (there
/// are no modules), ACLCAT none (no command is given ACL categories:
/// ACLs are not served). Anything else is a syntax error.
fn list(a: &Args, out: &mut Vec<u8>) {
    enum Filter<'a> {
        All,
        Nothing,
        Pattern(&'a [u8]),
    }
    let filter = match a.count() {
        2 => Filter::All,
        5 if a.arg(2).eq_ignore_ascii_case(b"filterby") => {
            let by = a.arg(3).to_ascii_lowercase();
            match &by[..] {
                b"pattern" => Filter::Pattern(a.arg(4)),
                b"module" | b"aclcat" => Filter::Nothing,
                _ => return reply::error(out, reply::SYNTAX),
            }
        }
        _ => return reply::error(out, reply::SYNTAX),
    };
    let mut names: Vec<String> = Vec::new();
    for n in Name::listed() {
        names.push(n.facts().name.to_string());
        for (of, full, _) in serverlab_proto::resp::name::SUBCOMMANDS {
            if *of == n {
                names.push(full.to_string());
            }
        }
    }
    names.retain(|n| match filter {
        Filter::All => true,
        Filter::Nothing => false,
        Filter::Pattern(p) => glob::matches(p, n.as_bytes()),
    });
    reply::array(out, names.len());
    names.iter().for_each(|n| reply::bulk(out, n.as_bytes()));
}

/// The parameters CONFIG GET knows: those clients ask for (and
/// `notify-keyspace-events`, as set).
const CONFIG: [(&str, &str); 7] = [
    ("appendonly", "no"),
    ("databases", "16"),
    ("maxclients", "10000"),
    ("maxmemory", "0"),
    ("notify-keyspace-events", ""),
    ("save", ""),
    ("timeout", "0"),
];

/// CONFIG GET pattern…: every matching name and its value, each once;
/// `events`: `notify-keyspace-events`' flags.
pub(super) fn config_get(a: &Args, events: u32, out: &mut Vec<u8>) {
    let patterns: Vec<&[u8]> = a.from(2).collect();
    let shown = super::notify::print(events);
    let hits: Vec<(&str, &str)> = CONFIG
        .iter()
        .map(|&(name, value)| match name {
            "notify-keyspace-events" => (name, &shown[..]),
            _ => (name, value),
        })
        .filter(|(name, _)| patterns.iter().any(|p| glob::matches(p, name.as_bytes())))
        .collect();
    reply::array(out, hits.len() * 2);
    for (name, value) in hits {
        reply::bulk(out, name.as_bytes());
        reply::bulk(out, value.as_bytes());
    }
}

/// HELLO's reply in RESP2: the server's facts as name/value pairs.
pub(super) fn hello(id: u64, out: &mut Vec<u8>) {
    reply::array(out, 14);
    for (k, v) in [("server", "redis"), ("version", "7.0.0")] {
        reply::bulk(out, k.as_bytes());
        reply::bulk(out, v.as_bytes());
    }
    reply::bulk(out, b"proto");
    reply::int(out, 2);
    reply::bulk(out, b"id");
    reply::int(out, id as i64);
    for (k, v) in [("mode", "standalone"), ("role", "master")] {
        reply::bulk(out, k.as_bytes());
        reply::bulk(out, v.as_bytes());
    }
    reply::bulk(out, b"modules");
    reply::array(out, 0);
}

#[cfg(test)]
mod tests {
    use super::super::RespService;
    use crate::{run_all, Service};
    use serverlab_proto::resp::{client, Limits};
    use serverlab_store::StoreKind;

    /// The replies to `cmds`, sent on one connection of `svc`.
    fn replies(svc: &RespService, cmds: &[&[&str]]) -> String {
        let mut wire = Vec::new();
        for c in cmds {
            let args: Vec<&[u8]> = c.iter().map(|a| a.as_bytes()).collect();
            client::command(&mut wire, &args);
        }
        let mut conn = svc.open("127.0.0.1:1".parse::<std::net::SocketAddr>().unwrap());
        let mut out = Vec::new();
        run_all(svc, &mut conn, &wire, &mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    /// The bulk string of INFO `sections`.
    fn info(svc: &RespService, sections: &[&str]) -> String {
        let mut cmd = vec!["INFO"];
        cmd.extend(sections);
        let reply = replies(svc, &[&cmd]);
        let (len, body) = reply.split_once("\r\n").expect("a bulk string");
        let len: usize = len.strip_prefix('$').unwrap().parse().unwrap();
        body[..len].to_string()
    }

    fn service() -> RespService {
        RespService::new(StoreKind::Sharded, Limits::default(), "test".into()).unwrap()
    }

    #[test]
    fn commandstats_errorstats_and_total_error_replies_as_redis_writes_them() {
        let svc = service();
        replies(
            &svc,
            &[
                &["SET", "s", "v"],
                &["INCR", "n"],
                &["INCR", "n"],
                &["INCRBY", "n", "2"],
                &["LPUSH", "s", "x"],
                &["GET"],
                &["NOSUCH", "a"],
                &["SET", "k", "v", "NX", "XX"],
            ],
        );
        let stats = info(&svc, &["commandstats"]);
        let zero = "usec=0,usec_per_call=0.00";
        assert_eq!(
            stats,
            format!(
                "# Commandstats\r\n\
                 cmdstat_get:calls=0,{zero},rejected_calls=1,failed_calls=0\r\n\
                 cmdstat_set:calls=2,{zero},rejected_calls=0,failed_calls=1\r\n\
                 cmdstat_incr:calls=2,{zero},rejected_calls=0,failed_calls=0\r\n\
                 cmdstat_incrby:calls=1,{zero},rejected_calls=0,failed_calls=0\r\n\
                 cmdstat_lpush:calls=1,{zero},rejected_calls=0,failed_calls=1\r\n"
            ),
            "the lines in the table's order"
        );
        let errors = info(&svc, &["errorstats"]);
        assert_eq!(
            errors,
            "# Errorstats\r\nerrorstat_ERR:count=3\r\nerrorstat_WRONGTYPE:count=1\r\n"
        );
        assert!(info(&svc, &["stats"]).contains("\r\ntotal_error_replies:4\r\n"));
    }

    #[test]
    fn cpu_is_the_processs_time_and_commandstats_only_when_asked() {
        let svc = service();
        let cpu = info(&svc, &["cpu"]);
        let lines: Vec<&str> = cpu.lines().collect();
        assert_eq!(lines[0], "# CPU");
        let names: Vec<&str> = lines[1..]
            .iter()
            .map(|l| l.split(':').next().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "used_cpu_sys",
                "used_cpu_user",
                "used_cpu_sys_children",
                "used_cpu_user_children"
            ]
        );
        for line in &lines[1..] {
            let value = line.split(':').nth(1).unwrap();
            let (secs, micros) = value.split_once('.').unwrap();
            assert!(secs.parse::<u64>().is_ok() && micros.len() == 6, "{line}");
        }
        // It is this process's time: work done shows (the clock counts
        // in ticks, so a test that has barely started may read zero).
        let user = |cpu: &str| -> f64 {
            let line = cpu
                .lines()
                .find(|l| l.starts_with("used_cpu_user:"))
                .unwrap();
            line.split(':').nth(1).unwrap().parse().unwrap()
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let mut spun = 0u64;
        while user(&info(&svc, &["cpu"])) == 0.0 {
            assert!(std::time::Instant::now() < deadline, "{cpu}");
            spun = (0..100_000u64).fold(spun, |a, x| std::hint::black_box(a ^ x.wrapping_mul(31)));
        }
        replies(&svc, &[&["PING"]]);
        for (asked, has_commandstats) in [
            (&[][..], false),
            (&["default"][..], false),
            (&["all"][..], true),
            (&["everything"][..], true),
            (&["default", "commandstats"][..], true),
        ] {
            let text = info(&svc, asked);
            assert_eq!(
                text.contains("# Commandstats\r\n"),
                has_commandstats,
                "{asked:?}"
            );
            assert!(
                text.contains("# CPU\r\n") && text.contains("# Errorstats"),
                "{asked:?}"
            );
        }
    }
}
