//! What a board run's clients share, whatever the encoding: each topic's
//! count before the run, and what the posters have been told since; and
//! the checks after the run.

use super::client::{BoardClient, Params, Role};
use super::encoding::Encoding;
use super::mirror::Mirror;
use super::{BoardResults, Reads};
use crate::checks::Checks;

pub struct Board {
    bases: Vec<u64>,
    mirror: Mirror,
}

impl Board {
    /// `bases`: each topic's count before the run.
    pub fn new(bases: Vec<u64>) -> Self {
        Board {
            mirror: Mirror::new(bases.clone()),
            bases,
        }
    }

    /// The run's clients: the posters, then the readers, each with its
    /// own `encoding()`.
    pub fn clients<E: Encoding>(
        &self,
        params: &Params,
        (posters, readers): (usize, usize),
        encoding: impl Fn() -> E,
    ) -> Vec<BoardClient<'_, E>> {
        let posters = (0..posters).map(|i| (Role::Poster, i));
        let readers = (0..readers).map(|i| (Role::Reader, i));
        posters
            .chain(readers)
            .map(|(role, i)| BoardClient::new(params.clone(), &self.mirror, role, i, encoding()))
            .collect()
    }

    /// After the run: no gaps in any topic, and each topic's final count
    /// (`finals`, asked with `what`: COUNT, LLEN) equals its count before
    /// plus what was acknowledged.
    pub fn final_checks(
        &self,
        what: &str,
        finals: Result<Vec<u64>, String>,
        checks: &mut Checks,
        errors: &mut Vec<String>,
    ) {
        for t in 0..self.bases.len() {
            let gaps = self.mirror.gaps(t);
            if !gaps.is_empty() {
                checks.mismatch(format!(
                    "topic t{t}: ids {gaps:?} were never acknowledged to any poster (gap)"
                ));
            }
        }
        let finals = match finals {
            Ok(finals) => finals,
            Err(e) => return errors.push(format!("final {what} check: {e}")),
        };
        for (t, (got, base)) in finals.iter().zip(&self.bases).enumerate() {
            checks.checked(1);
            let want = base + self.mirror.acked(t);
            if *got != want {
                checks.mismatch(format!(
                    "topic t{t}: final {what} {got} but {want} messages were acknowledged"
                ));
            }
        }
    }

    /// The board's figures: the reads that found a message (`hits`) or
    /// none (`misses`), and the posts acknowledged.
    pub fn results(&self, hits: u64, misses: u64) -> BoardResults {
        BoardResults {
            reads: Reads::of(hits, misses),
            posts_acknowledged: (0..self.bases.len()).map(|t| self.mirror.acked(t)).sum(),
        }
    }
}
