//! The driver against real sockets: connections replaced until the
//! conversations finish, a deadline, and failures said to the conversation.

use super::*;
use crate::Progress;
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::net::TcpListener;

/// What the test server does with each line it reads.
#[derive(Clone, Copy)]
enum Server {
    /// Answers `pong`, until the client closes.
    Answer,
    /// Never answers.
    Silent,
    /// Closes without answering.
    Hang,
    /// Sends a byte of a reply that never ends every 20 ms.
    Trickle,
    /// Sends a reply that never ends, as fast as it goes.
    Endless,
}

fn server(kind: Server) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            std::thread::spawn(move || {
                let mut w = stream.try_clone().unwrap();
                for line in BufReader::new(stream).lines() {
                    match (kind, line) {
                        (_, Err(_)) => return,
                        (Server::Answer, Ok(_)) => {
                            if w.write_all(b"pong\n").is_err() {
                                return;
                            }
                        }
                        (Server::Silent, Ok(_)) => {}
                        (Server::Hang, Ok(_)) => return,
                        (Server::Trickle, Ok(_)) => {
                            while w.write_all(b"p").is_ok() {
                                std::thread::sleep(Duration::from_millis(20));
                            }
                            return;
                        }
                        (Server::Endless, Ok(_)) => {
                            while w.write_all(&[b'p'; 4096]).is_ok() {}
                            return;
                        }
                    }
                }
            });
        }
    });
    addr
}

/// A client that opens up to `connects` connections and sends
/// `per_connection` lines on each, one at a time.
#[derive(Default)]
struct Probe {
    connects: usize,
    per_connection: usize,
    opened: usize,
    sent_here: usize,
    in_flight: usize,
    replies: usize,
    failures: Vec<String>,
    /// The batch (by replies taken before it) that each sampled receipt
    /// came with, and whether the kernel's stamp came with it.
    sampled: Vec<(usize, bool)>,
}

impl Probe {
    fn new(connects: usize, per_connection: usize) -> Self {
        Probe {
            connects,
            per_connection,
            ..Probe::default()
        }
    }
}

impl Conversation for Probe {
    type Sink = ();

    fn connect(&mut self, _now: Instant) -> bool {
        if self.opened == self.connects {
            return false;
        }
        self.opened += 1;
        self.sent_here = 0;
        true
    }

    fn fill(&mut self, wire: &mut Vec<u8>, _now: Instant) -> usize {
        if self.in_flight > 0 || self.sent_here == self.per_connection {
            return 0;
        }
        wire.extend_from_slice(b"ping\n");
        self.sent_here += 1;
        self.in_flight = 1;
        1
    }

    fn arrived(&mut self, receipt: stamp::Receipt) {
        if let stamp::Receipt::Sampled(at) = receipt {
            self.sampled.push((self.replies, at.is_some()));
        }
    }

    fn take(&mut self, input: &[u8], _now: Instant, _: &mut ()) -> Result<Option<usize>, String> {
        let Some((reply, len)) = take_line(input)? else {
            return Ok(None);
        };
        if reply != b"pong" {
            return Err(format!("{reply:?}"));
        }
        self.in_flight = 0;
        self.replies += 1;
        Ok(Some(len))
    }

    fn in_flight(&self) -> usize {
        self.in_flight
    }

    fn connection_done(&self) -> bool {
        self.in_flight == 0 && self.sent_here == self.per_connection
    }

    fn failed(&mut self, failure: Failure, _now: Instant) {
        self.in_flight = 0;
        self.failures.push(failure.to_string());
    }
}

fn options(addr: SocketAddr) -> Options {
    Options {
        addr: addr.into(),
        connect_timeout: Duration::from_secs(5),
        reply_timeout: Some(Duration::from_secs(10)),
        deadline: None,
        drain_timeout: None,
        max_reply: super::MAX_REPLY,
        poll: Default::default(),
        depth: 1,
    }
}

fn drive_probes(probes: Vec<Probe>, opts: &Options) -> Vec<Slot<Probe>> {
    let slots = probes.into_iter().map(Slot::new).collect();
    run_loops(slots, opts, &Progress::default(), &|| ()).slots
}

#[test]
fn connections_end_and_are_replaced_until_the_clients_finish() {
    let addr = server(Server::Answer);
    let slots = drive_probes((0..3).map(|_| Probe::new(20, 3)).collect(), &options(addr));
    assert_eq!(slots.len(), 3);
    for s in &slots {
        assert_eq!(s.client.failures, Vec::<String>::new());
        assert_eq!((s.client.opened, s.client.replies), (20, 60));
        assert!(s.finished_at.is_some() && s.stopped_at.is_none());
    }
}

#[test]
fn a_deadline_stops_persistent_connections() {
    let addr = server(Server::Answer);
    let mut opts = options(addr);
    let t0 = Instant::now();
    opts.deadline = Some(t0 + Duration::from_millis(200));
    opts.drain_timeout = Some(Duration::from_secs(5));
    let slots = drive_probes(vec![Probe::new(1, usize::MAX)], &opts);
    let s = &slots[0];
    assert!(s.client.failures.is_empty(), "{:?}", s.client.failures);
    assert!(s.client.replies > 0);
    assert!(s
        .stopped_at
        .is_some_and(|t| t >= t0 + Duration::from_millis(200)));
}

#[test]
fn failures_reach_the_client() {
    // Nothing listens.
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let slots = drive_probes(vec![Probe::new(2, 1)], &options(closed));
    let f = &slots[0].client.failures;
    assert_eq!(f.len(), 2, "{f:?}");
    assert!(
        f[0].starts_with(&format!("cannot connect to {closed}")),
        "{f:?}"
    );
    // The server closes with a request in flight.
    let slots = drive_probes(vec![Probe::new(1, 1)], &options(server(Server::Hang)));
    assert_eq!(
        slots[0].client.failures,
        ["the server closed the connection mid-run"]
    );
    // The server never answers.
    let mut opts = options(server(Server::Silent));
    opts.reply_timeout = Some(Duration::from_millis(100));
    let slots = drive_probes(vec![Probe::new(1, 1)], &opts);
    let f = &slots[0].client.failures;
    assert!(
        f.len() == 1 && f[0].starts_with("no reply within 0.1 s"),
        "{f:?}"
    );
}

/// A reply that trickles in a byte at a time is no progress: the reply
/// timeout counts from the request to a whole reply.
#[test]
fn a_trickled_reply_still_times_out() {
    let mut opts = options(server(Server::Trickle));
    opts.reply_timeout = Some(Duration::from_millis(300));
    let t0 = Instant::now();
    let slots = drive_probes(vec![Probe::new(1, 1)], &opts);
    let f = &slots[0].client.failures;
    assert!(
        f.len() == 1 && f[0].starts_with("no reply within 0.3 s"),
        "{f:?}"
    );
    // Bytes came every 20 ms; a timeout reset by each would never fire.
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
}

/// A reply past the limit closes the connection, said as such, and the
/// client holds no more than about the limit.
#[test]
fn a_reply_past_the_limit_fails_its_connection() {
    let mut opts = options(server(Server::Endless));
    opts.max_reply = 64 * 1024;
    let slots = drive_probes(vec![Probe::new(1, 1)], &opts);
    assert_eq!(
        slots[0].client.failures,
        [reply_too_long(64 * 1024)],
        "the reply limit"
    );
}

/// Lock-step, each reply is a batch of its own: one in
/// [`stamp::EVERY`] is sampled, at the gaps the sampler draws, and a
/// sampled one carries the kernel's stamp (loopback TCP gives them).
#[test]
fn replies_are_stamped_on_a_sample_of_batches() {
    let addr = server(Server::Answer);
    let slots = drive_probes(vec![Probe::new(1, 3200)], &options(addr));
    let c = &slots[0].client;
    assert_eq!((c.failures.len(), c.replies), (0, 3200), "{:?}", c.failures);
    // Told once per look at the input, a reply or none taken: the
    // replies before each sampled look are its batch's index.
    let batches: Vec<usize> = c.sampled.iter().map(|s| s.0).collect();
    let mut distinct = batches.clone();
    distinct.dedup();
    assert_eq!(distinct[0], 0, "the first batch is sampled");
    let top = 2 * stamp::EVERY as usize - 1;
    for w in distinct.windows(2) {
        assert!((1..=top).contains(&(w[1] - w[0])), "{distinct:?}");
    }
    // About one in 16 (at least one in 31 by the gaps' bound).
    assert!(distinct.len() >= 3200 / top, "{}", distinct.len());
    assert!(distinct.len() <= 3200 / 4, "{}", distinct.len());
    // The kernel turns its stamps on a moment after the first socket
    // asks: the first sampled replies may go without.
    let stamped = c.sampled.iter().filter(|s| s.1).count();
    assert!(
        stamped >= distinct.len() / 2,
        "{stamped} of {}",
        distinct.len()
    );
}
