//! The bucket load's bound ([`Bound`], computed in
//! [`crate::results::bucket`], where a merge computes it too) from the
//! load's settings.

pub use crate::results::bucket::Bound;

use super::BucketLoad;
use crate::results::bucket::BoundConfig;

impl BucketLoad {
    /// The settings the bound is computed from.
    pub fn bound_config(&self) -> BoundConfig {
        BoundConfig {
            connections: self.connections as u64,
            delay_unit: self.delay_unit,
            delay_mode: self.delay_mode,
            server_concurrency: self.server_concurrency,
            server_cores: self.server_cores,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverlab_proto::bucket::{DelayMode, DelayUnit};

    /// The bound's settings as the load writes them in its `config`: what
    /// a merge reads them back from.
    #[test]
    fn the_bounds_settings_read_back_from_the_config() {
        let mut c = BucketLoad::new("127.0.0.1:1".parse::<std::net::SocketAddr>().unwrap());
        c.connections = 16;
        c.delay_unit = DelayUnit::Millis;
        c.delay_mode = DelayMode::Work;
        c.server_concurrency = Some(4);
        let config = serde_json::to_value(&c).unwrap();
        let read: BoundConfig = serde_json::from_value(config).unwrap();
        assert_eq!(read, c.bound_config());
    }
}
