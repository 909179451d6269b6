//! Random operation intervals, as clients that each send one operation
//! at a time make them: for the checker's tests and its throughput
//! example, which build histories of known answers on them.

/// One operation's interval: its client, when it was sent, the instant
/// it took effect (inside the interval) and when it was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub client: usize,
    pub sent: u64,
    pub effect: u64,
    pub answered: u64,
}

/// `n` intervals from `clients` clients taking turns, each client's back
/// to back with up to `think` ticks between them; each takes effect 1 to
/// 40,000 ticks after it is sent and is answered as long after. Sorted
/// by the instant they took effect, the order a correct server applied
/// them in.
pub fn random_spans(rng: &mut fastrand::Rng, n: usize, clients: usize, think: u64) -> Vec<Span> {
    let mut clock = vec![0u64; clients];
    let mut spans: Vec<Span> = (0..n)
        .map(|i| {
            let client = i % clients;
            let sent = clock[client] + rng.u64(0..think);
            let effect = sent + rng.u64(1..40_000);
            let answered = effect + rng.u64(1..40_000);
            clock[client] = answered;
            Span {
                client,
                sent,
                effect,
                answered,
            }
        })
        .collect();
    spans.sort_by_key(|s| s.effect);
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_client_s_spans_follow_one_another_and_effects_lie_inside() {
        let mut rng = fastrand::Rng::with_seed(7);
        let spans = random_spans(&mut rng, 500, 4, 100);
        assert_eq!(spans.len(), 500);
        assert!(spans.windows(2).all(|w| w[0].effect <= w[1].effect));
        for s in &spans {
            assert!(s.sent < s.effect && s.effect < s.answered, "{s:?}");
        }
        for c in 0..4 {
            let mut mine: Vec<&Span> = spans.iter().filter(|s| s.client == c).collect();
            mine.sort_by_key(|s| s.sent);
            assert!(mine.windows(2).all(|w| w[0].answered <= w[1].sent));
        }
    }
}
