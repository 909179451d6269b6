//! The board's state around a run: every topic's COUNT before it (what
//! the checks start from) and after it (for the final check), and the EXIT
//! the reference client sends at the end. Blocking requests on their own
//! connection; the run itself is on the driver.

use super::{workload, BoardLoad, CHECK_TIMEOUT, CONNECT_TIMEOUT};
use crate::conn::FramedConn;
use crate::endpoint::Endpoint;
use crate::LoadError;
use serverlab_proto::board::{count_answer, CountAnswer, Request};
use serverlab_proto::Terminator;
use std::time::Duration;

fn connect(addr: &Endpoint) -> Result<FramedConn, LoadError> {
    FramedConn::connect(addr, CONNECT_TIMEOUT).map_err(LoadError::connecting(addr))
}

/// Ask COUNT for every topic on one connection, all answered within the
/// load's reply timeout (at most [`CHECK_TIMEOUT`]).
pub(super) fn counts(cfg: &BoardLoad) -> Result<Vec<u64>, LoadError> {
    let topics = cfg.topics;
    let mut conn = connect(&cfg.addr)?;
    conn.set_deadline(CHECK_TIMEOUT.min(cfg.reply_timeout));
    conn.set_max_reply(cfg.reply_limit());
    let agent = cfg.agent;
    let mut wire = Vec::new();
    let names: Vec<Vec<u8>> = workload::agent_topics(topics, agent)
        .map(workload::topic_name)
        .collect();
    for name in &names {
        Request::Count { topic: name }.encode(&mut wire, Terminator::Nul);
    }
    conn.send(&wire)?;
    names
        .iter()
        .map(|name| count_reply(&mut conn, name))
        .collect()
}

/// A COUNT's reply. The request sent back, reversed (an echo server: the
/// board's transport ceiling) or not, counts as 0, as only a verifying run relies on
/// these numbers; anything else that is not a count is another protocol's
/// server, said at once rather than after a run of nonsense.
fn count_reply(conn: &mut FramedConn, topic: &[u8]) -> Result<u64, LoadError> {
    let reply = conn.recv()?;
    let mut request = Vec::new();
    Request::Count { topic }.encode(&mut request, Terminator::Nul);
    let request = request.strip_suffix(b"\0").unwrap_or(&request);
    match count_answer(request, reply) {
        CountAnswer::Count(n) => Ok(n),
        CountAnswer::Echoed => Ok(0),
        CountAnswer::Other => Err(LoadError::WrongProtocol {
            protocol: serverlab_proto::board::NAME,
            sent: crate::quoted(reply),
        }),
    }
}

/// Send EXIT on a new connection, as the reference client does at the end.
pub fn send_exit(addr: &Endpoint) -> Result<(), LoadError> {
    let mut conn = connect(addr)?;
    conn.set_deadline(Duration::from_secs(2));
    let mut wire = Vec::new();
    Request::Exit.encode(&mut wire, Terminator::Nul);
    conn.send(&wire)?;
    let _ = conn.recv();
    Ok(())
}
