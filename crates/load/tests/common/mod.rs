//! What the output tests share: a closed-loop report around its results.

use serverlab_load::env::Environment;
use serverlab_load::report::{LoadReport, Results};

/// A closed-loop run of `protocol` that measured `results`.
pub fn closed_loop(protocol: &str, results: Results) -> LoadReport {
    LoadReport {
        schema: serverlab_load::report::SCHEMA.into(),
        protocol: protocol.into(),
        load_model: "closed-loop".into(),
        config: serde_json::json!({}),
        environment: Environment::capture(),
        results,
        search: None,
        scan: None,
    }
}
