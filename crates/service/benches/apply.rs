//! What one request costs the service layer alone (no sockets): board
//! POST and READ on each store next to echo, the transport ceiling's own
//! work. The ratio of these per-request costs is what the board/echo
//! throughput ratio converges to when the network costs are amortised
//! (pipelined load).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use serverlab_service::board::{BoardService, ExitPolicy};
use serverlab_service::echo::EchoService;
use serverlab_service::{apply_timed, Frame, Service};
use serverlab_store::StoreKind;
use serverlab_util::Named;
use std::hint::black_box;

/// Frame and apply every request in `wire` on one connection, as a
/// server does (`apply_timed`: counted, one in 64 timed).
fn drive<S: Service>(svc: &S, conn: &mut S::Conn, wire: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut at = 0;
    while let Frame::Ready { len, request } = svc.frame(conn, &wire[at..], out) {
        apply_timed(svc, conn, request, &wire[at..at + len], out);
        at += len;
    }
}

fn batch(make: impl Fn(usize) -> String) -> Vec<u8> {
    (0..1000)
        .flat_map(|i| make(i).into_bytes().into_iter().chain([0u8]))
        .collect()
}

fn benches(c: &mut Criterion) {
    let peer: std::net::SocketAddr = "127.0.0.1:1".parse().unwrap();
    let msg = "p1-12345:abcdefghijklmnopqrstuvw";
    let posts = batch(|i| format!("POST@t{}#{msg}", i % 16));
    let reads = batch(|i| format!("READ@t{}#{}", i % 16, i % 50));
    let mut g = c.benchmark_group("apply");
    g.throughput(Throughput::Elements(1000));
    let mut out = Vec::with_capacity(1 << 16);

    let echo = EchoService::new(65535);
    g.bench_function("echo", |b| {
        b.iter(|| drive(&echo, &mut (), black_box(&posts), &mut out))
    });

    for &kind in StoreKind::ALL {
        let svc = BoardService::new(serverlab_store::board::new(kind), 65535, ExitPolicy::Never);
        let mut conn = svc.open(peer);
        // Enough messages that READs hit.
        drive(&svc, &mut conn, &posts, &mut out);
        g.bench_with_input(
            BenchmarkId::new("board-post", kind.name()),
            &posts,
            |b, w| b.iter(|| drive(&svc, &mut conn, black_box(w), &mut out)),
        );
        g.bench_with_input(
            BenchmarkId::new("board-read", kind.name()),
            &reads,
            |b, w| b.iter(|| drive(&svc, &mut conn, black_box(w), &mut out)),
        );
    }
    g.finish();
}

criterion_group!(apply, benches);
criterion_main!(apply);
