//! kv's service in the simulated world: PUT, GET and DELETE of a few
//! keys, its store read back with a GET of each.

use crate::world::{self, peer, Proto, Request};
use serverlab_service::kv::{KvConfig, KvService};
use serverlab_service::wal::{ApplyError, Wal};
use serverlab_service::{run_all, Service};
use serverlab_store::StoreKind;

const KEYS: &[&str] = &["k0", "k1", "k2", "k3"];
const VALUES: &[&str] = &["a", "bb", "", "value"];

/// kv over one store kind.
pub struct Kv(StoreKind);

/// A run of kv from `seed` (the store kind is the seed's too).
pub fn run(seed: u64, verbose: bool) -> Result<(), String> {
    let kinds = serverlab_store::resp::KINDS;
    world::run(
        Kv(kinds[(seed % kinds.len() as u64) as usize]),
        seed,
        verbose,
    )
}

fn request(method: &str, key: &str, body: &str) -> Request {
    let mut wire = format!("{method} /{key} HTTP/1.1\r\nHost: sim\r\n");
    if method == "PUT" {
        wire += &format!("Content-Length: {}\r\n", body.len());
    }
    wire += "\r\n";
    wire += body;
    let text = match method {
        "PUT" => format!("PUT /{key} {body:?}"),
        _ => format!("{method} /{key}"),
    };
    Request {
        wire: wire.into_bytes(),
        text,
    }
}

impl Proto for Kv {
    type Svc = KvService;

    fn service(&self) -> KvService {
        KvService::new(serverlab_store::kv::new(self.0), KvConfig::default())
    }

    fn replay(svc: &KvService, record: &[u8]) -> Result<(), ApplyError> {
        svc.replay(record)
    }

    fn with_log(svc: KvService, wal: Wal) -> KvService {
        svc.with_log(wal)
    }

    fn replayed(svc: KvService) -> KvService {
        svc
    }

    fn next(&self, rng: &mut fastrand::Rng, _now: i64, _single: bool) -> Vec<Request> {
        let key = KEYS[rng.usize(..KEYS.len())];
        let r = match rng.u8(..10) {
            0..=3 => request("PUT", key, VALUES[rng.usize(..VALUES.len())]),
            4..=7 => request("GET", key, ""),
            _ => request("DELETE", key, ""),
        };
        vec![r]
    }

    fn dump(svc: &KvService, _t: i64) -> String {
        let mut conn = svc.open(peer());
        let mut all = String::new();
        for key in KEYS {
            let mut out = Vec::new();
            run_all(svc, &mut conn, &request("GET", key, "").wire, &mut out);
            svc.logged(&mut conn);
            let out = String::from_utf8_lossy(&Self::normalize(out)).into_owned();
            all += &format!("{key}: {}\n", out.replace("\r\n", " "));
        }
        all
    }

    /// Without its `Date` line.
    fn normalize(reply: Vec<u8>) -> Vec<u8> {
        let text = String::from_utf8_lossy(&reply);
        let kept: Vec<&str> = text
            .split("\r\n")
            .filter(|l| !l.starts_with("Date: "))
            .collect();
        kept.join("\r\n").into_bytes()
    }

    fn refused(reply: &[u8]) -> bool {
        reply.starts_with(b"HTTP/1.1 503")
    }
}
