//! What a request's delay means: the unit it counts in (`--delay-unit`)
//! and how the server spends it (`--delay-mode`). Shared by the server,
//! which performs delays, and the load, which computes their bound.

use serverlab_util::Named;
use std::time::Duration;

/// The unit of a request's `<delay>`: seconds in the assignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DelayUnit {
    Seconds,
    Millis,
    Micros,
}

impl Named for DelayUnit {
    const WHAT: &'static str = "delay unit";
    const ALL: &'static [DelayUnit] = &[DelayUnit::Seconds, DelayUnit::Millis, DelayUnit::Micros];

    /// As `--delay-unit` spells it.
    fn name(self) -> &'static str {
        match self {
            DelayUnit::Seconds => "s",
            DelayUnit::Millis => "ms",
            DelayUnit::Micros => "us",
        }
    }
}

impl DelayUnit {
    /// One unit, in seconds.
    pub fn seconds(self) -> f64 {
        match self {
            DelayUnit::Seconds => 1.0,
            DelayUnit::Millis => 1e-3,
            DelayUnit::Micros => 1e-6,
        }
    }

    /// `n` units as a duration (exact, and never overflows: a u64 of
    /// seconds is a valid `Duration`).
    pub fn duration(self, n: u64) -> Duration {
        match self {
            DelayUnit::Seconds => Duration::from_secs(n),
            DelayUnit::Millis => Duration::from_millis(n),
            DelayUnit::Micros => Duration::from_micros(n),
        }
    }
}

serverlab_util::named_enum_impls!(DelayUnit);

/// How the server spends a delay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DelayMode {
    /// Busy-loop on a monotonic clock until the wall time has passed (the
    /// assignment's demand): occupies a thread, uses CPU while it runs,
    /// yet ends on time however many share a core.
    Spin,
    /// Wait without using CPU: an I/O-bound service.
    Sleep,
    /// A calibrated amount of CPU work: a CPU-bound service, whose
    /// requests take longer when they share a core.
    Work,
}

impl Named for DelayMode {
    const WHAT: &'static str = "delay mode";
    const ALL: &'static [DelayMode] = &[DelayMode::Spin, DelayMode::Sleep, DelayMode::Work];

    /// As `--delay-mode` spells it.
    fn name(self) -> &'static str {
        match self {
            DelayMode::Spin => "spin",
            DelayMode::Sleep => "sleep",
            DelayMode::Work => "work",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            DelayMode::Spin => {
                "busy-wait on the clock until the delay has passed (the assignment's)"
            }
            DelayMode::Sleep => "wait without using CPU, like a service blocked on I/O",
            DelayMode::Work => "CPU work calibrated at start: one unit costs that much CPU time",
        }
    }
}

serverlab_util::named_enum_impls!(DelayMode);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(DelayUnit::Seconds.duration(3), Duration::from_secs(3));
        assert_eq!(DelayUnit::Millis.duration(3), Duration::from_millis(3));
        assert_eq!(DelayUnit::Micros.duration(3), Duration::from_micros(3));
        assert_eq!(
            DelayUnit::Seconds.duration(u64::MAX),
            Duration::from_secs(u64::MAX)
        );
        for &u in DelayUnit::ALL {
            assert_eq!(u.name().parse::<DelayUnit>(), Ok(u));
            assert!((u.duration(1000).as_secs_f64() - 1000.0 * u.seconds()).abs() < 1e-9);
        }
        assert!("sec".parse::<DelayUnit>().is_err());
    }

    #[test]
    fn modes() {
        for &m in DelayMode::ALL {
            assert_eq!(m.name().parse::<DelayMode>(), Ok(m));
        }
        assert!("yield".parse::<DelayMode>().is_err());
    }
}
