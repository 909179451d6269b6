//! How a request's delay becomes a [`Delay`] for the strategy to perform:
//! the unit, the mode, and for `work` the calibrated rate.

use super::calibrate::Calibration;
use crate::Delay;
use serverlab_proto::bucket::{DelayMode, DelayUnit};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    unit: DelayUnit,
    mode: DelayMode,
    /// Work-loop iterations per unit (`work` mode only).
    iterations_per_unit: f64,
}

impl Timing {
    /// Busy-wait delays.
    pub fn spin(unit: DelayUnit) -> Self {
        Timing {
            unit,
            mode: DelayMode::Spin,
            iterations_per_unit: 0.0,
        }
    }

    /// Delays that wait without using CPU.
    pub fn sleep(unit: DelayUnit) -> Self {
        Timing {
            unit,
            mode: DelayMode::Sleep,
            iterations_per_unit: 0.0,
        }
    }

    /// CPU work, one unit costing one unit of CPU time at the calibrated rate.
    pub fn work(unit: DelayUnit, calibration: &Calibration) -> Self {
        Timing {
            unit,
            mode: DelayMode::Work,
            iterations_per_unit: calibration.iterations_per_second * unit.seconds(),
        }
    }

    pub fn unit(&self) -> DelayUnit {
        self.unit
    }

    pub fn mode(&self) -> DelayMode {
        self.mode
    }

    /// Work-loop iterations one unit costs (0 unless in `work` mode).
    pub fn iterations_per_unit(&self) -> f64 {
        self.iterations_per_unit
    }

    /// The delay for `units` units; none for 0 (a read).
    pub fn delay(&self, units: u64) -> Option<Delay> {
        if units == 0 {
            return None;
        }
        Some(match self.mode {
            DelayMode::Spin => Delay::Spin(self.unit.duration(units)),
            DelayMode::Sleep => Delay::Sleep(self.unit.duration(units)),
            // `as` saturates: an absurd --max-delay cannot wrap around.
            DelayMode::Work => {
                Delay::Work((units as f64 * self.iterations_per_unit).round() as u64)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn delays_per_mode_and_unit() {
        let spin = Timing::spin(DelayUnit::Millis);
        assert_eq!(spin.delay(0), None);
        assert_eq!(spin.delay(3), Some(Delay::Spin(Duration::from_millis(3))));
        let sleep = Timing::sleep(DelayUnit::Seconds);
        assert_eq!(sleep.delay(2), Some(Delay::Sleep(Duration::from_secs(2))));
        let work = Timing::work(DelayUnit::Micros, &Calibration::fixed(2e9));
        assert_eq!(work.delay(5), Some(Delay::Work(10_000)));
        assert_eq!(work.delay(0), None);
        assert_eq!(work.delay(u64::MAX), Some(Delay::Work(u64::MAX)));
        let work_s = Timing::work(DelayUnit::Seconds, &Calibration::fixed(1.5e9));
        assert_eq!(work_s.delay(60), Some(Delay::Work(90_000_000_000)));
    }
}
