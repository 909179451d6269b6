//! The default text sink: what it says about late replies.

use serverlab_load::env::Environment;
use serverlab_load::output::text;
use serverlab_load::report::{ClientCpu, LoadReport, Results, Verification};

fn with_late(verify: bool) -> LoadReport {
    LoadReport {
        schema: serverlab_load::report::SCHEMA.into(),
        protocol: "echo".into(),
        load_model: "closed-loop".into(),
        config: serde_json::json!({}),
        environment: Environment::capture(),
        results: Results {
            duration_s: 1.0,
            requests: 100,
            throughput_rps: 100.0,
            concurrency: 1,
            operations: Vec::new(),
            per_second: vec![100],
            threads: Vec::new(),
            late_replies: 7,
            errors: Vec::new(),
            verification: Verification {
                enabled: verify,
                ..Verification::default()
            },
            client_cpu: ClientCpu::measure((0.1, 0.0), 0.0, 1.0, 1),
            protocol: None,
        },
    }
}

#[test]
fn late_replies_are_said_checked_only_when_verifying() {
    let on = text::render(&with_late(true));
    assert!(
        on.contains("7 replies arrived after the window: checked, not counted"),
        "{on}"
    );
    let off = text::render(&with_late(false));
    assert!(
        off.contains("7 replies arrived after the window: not counted\n"),
        "{off}"
    );
    assert!(!off.contains("checked"), "{off}");
}
