//! Running a check: choose the cases, make sure the server answers, run
//! each case on fresh connections, then the concurrency phase, then any
//! case that must come last (board's EXIT).

use crate::case::{Case, CaseResult, Ctx, Scope, Status};
use crate::concurrency::{ConcurrencyReport, Plan};
use crate::error::CheckError;
use crate::identify::identify;
use crate::protocol::Protocol;
use crate::report::{Report, SCHEMA};
use crate::wire::Conn;
use std::net::SocketAddr;
use std::time::Instant;

/// The name `--only` and `--skip` use for the concurrency phase.
pub const LINEARIZABLE: &str = "linearizable";

/// Why a case the user left out was skipped: text output does not list
/// these, only counts them.
pub const NOT_IN_ONLY: &str = "not named by --only";
pub const IN_SKIP: &str = "named by --skip";

/// What the command line chose.
#[derive(Debug, Clone)]
pub struct Options {
    pub only: Vec<String>,
    pub skip: Vec<String>,
    /// Run only the assignment's rules.
    pub assignment: bool,
    pub plan: Plan,
}

/// Progress, for a caller that prints as the check goes.
pub enum Event<'a> {
    /// The server answered and the settings are known: the report so far.
    Started(&'a Report),
    Case(&'a CaseResult),
    ConcurrencyStarts(&'a Plan),
    Concurrency(&'a ConcurrencyReport),
}

/// Every name `--only`/`--skip` accept for `P`.
pub fn names<P: Protocol>() -> Vec<&'static str> {
    let mut names: Vec<_> = P::cases().iter().map(|c| c.name).collect();
    names.push(LINEARIZABLE);
    names
}

/// Check the server at `addr`.
pub fn run<P: Protocol>(
    proto: &mut P,
    addr: SocketAddr,
    opts: &Options,
    on: &mut dyn FnMut(Event),
) -> Result<Report, CheckError> {
    let cases = P::cases();
    validate(proto, &cases, opts)?;
    let timeout = opts.plan.timeout;
    Conn::open(addr, timeout).map_err(|source| CheckError::Unreachable {
        addr,
        protocol: P::NAME,
        source,
    })?;
    let started = Instant::now();
    let nonce = format!("ck{:08x}", fastrand::u32(..));
    identify(proto, addr, timeout, &nonce).map_err(CheckError::NotTheProtocol)?;
    proto.prepare(addr, timeout).map_err(CheckError::Setup)?;
    let mut report = Report {
        schema: SCHEMA,
        protocol: P::NAME,
        addr: addr.to_string(),
        settings: proto
            .settings()
            .into_iter()
            .map(|(k, v)| (k.to_string(), serde_json::Value::String(v)))
            .collect(),
        assignment: opts.assignment,
        cases: Vec::new(),
        concurrency: None,
        concurrency_skipped: None,
        passed: 0,
        failed: 0,
        skipped: 0,
        ok: false,
        seconds: 0.0,
    };
    on(Event::Started(&report));
    let (last, first): (Vec<_>, Vec<_>) = cases.iter().partition(|c| c.opt_in.is_some());
    // Once a case fails for want of a whole reply (none within the
    // timeout, or one longer than any case can get), the cases after it
    // are not run (each would wait out the timeout too), so a stuck or
    // streaming server ends the check within one case's time.
    let mut stalled = None;
    for case in first {
        report
            .cases
            .push(run_or_not(proto, addr, opts, &nonce, case, &mut stalled));
        on(Event::Case(report.cases.last().expect("pushed")));
    }
    match phase_left_out(stalled, opts) {
        None => {
            on(Event::ConcurrencyStarts(&opts.plan));
            let phase = proto.concurrency(addr, &opts.plan, &nonce);
            on(Event::Concurrency(&phase));
            report.concurrency = Some(phase);
        }
        Some(why) => report.concurrency_skipped = Some(why),
    }
    for case in last {
        report
            .cases
            .push(run_or_not(proto, addr, opts, &nonce, case, &mut stalled));
        on(Event::Case(report.cases.last().expect("pushed")));
    }
    report.seconds = started.elapsed().as_secs_f64();
    report.tally();
    Ok(report)
}

/// Why the concurrency phase is not run, if it is not: a case got no
/// whole reply (`stalled`), or the user left it out.
fn phase_left_out(stalled: Option<&str>, opts: &Options) -> Option<String> {
    match stalled {
        Some(at) => Some(format!(
            "the server sent no whole reply in '{at}', so the clients were not started"
        )),
        None => skip_reason(LINEARIZABLE, Scope::Assignment, opts)
            .map(|why| format!("'{LINEARIZABLE}' {why}")),
    }
}

fn validate<P: Protocol>(proto: &P, cases: &[Case<P>], opts: &Options) -> Result<(), CheckError> {
    let known = names::<P>();
    for name in opts.only.iter().chain(&opts.skip) {
        if !known.contains(&name.as_str()) {
            return Err(CheckError::Usage(format!(
                "no case '{name}' for {}; the cases are: {}",
                P::NAME,
                known.join(", ")
            )));
        }
    }
    for case in cases {
        if let Some(flag) = case.opt_in {
            if opts.only.iter().any(|n| n == case.name) && !proto.opted_in(flag) {
                return Err(CheckError::Usage(format!(
                    "the case '{}' runs only with {flag}",
                    case.name
                )));
            }
        }
    }
    Ok(())
}

fn skip_reason(name: &str, scope: Scope, opts: &Options) -> Option<String> {
    if !opts.only.is_empty() && !opts.only.iter().any(|n| n == name) {
        return Some(NOT_IN_ONLY.into());
    }
    if opts.skip.iter().any(|n| n == name) {
        return Some(IN_SKIP.into());
    }
    if opts.assignment && scope == Scope::Serverlab {
        return Some("serverlab's own rule, not the assignment's (--assignment)".into());
    }
    None
}

/// Run `case`, unless an earlier case (`stalled`) found the server no
/// longer answering; note it in `stalled` if this one does.
fn run_or_not<P: Protocol>(
    proto: &P,
    addr: SocketAddr,
    opts: &Options,
    nonce: &str,
    case: &Case<P>,
    stalled: &mut Option<&'static str>,
) -> CaseResult {
    let timeouts = crate::wire::hopeless_so_far();
    let result = match *stalled {
        Some(at) => not_run(case, at),
        None => run_case(proto, addr, opts, nonce, case),
    };
    if result.status == Status::Failed && crate::wire::hopeless_so_far() > timeouts {
        stalled.get_or_insert(case.name);
    }
    result
}

/// A case not run: the server sent no whole reply in case `at`.
fn not_run<P: Protocol>(case: &Case<P>, at: &str) -> CaseResult {
    CaseResult {
        name: case.name,
        scope: case.scope,
        checks: case.checks,
        why: case.why,
        status: Status::Skipped,
        reason: Some(format!(
            "not run: the server sent no whole reply in '{at}' (none within the --timeout, or one \
             longer than any case can get)"
        )),
        exchanges: Vec::new(),
        seconds: 0.0,
    }
}

fn run_case<P: Protocol>(
    proto: &P,
    addr: SocketAddr,
    opts: &Options,
    nonce: &str,
    case: &Case<P>,
) -> CaseResult {
    let mut result = CaseResult {
        name: case.name,
        scope: case.scope,
        checks: case.checks,
        why: case.why,
        status: Status::Skipped,
        reason: skip_reason(case.name, case.scope, opts),
        exchanges: Vec::new(),
        seconds: 0.0,
    };
    if let Some(flag) = case.opt_in.filter(|f| !proto.opted_in(f)) {
        result
            .reason
            .get_or_insert(format!("runs only with {flag}"));
    }
    if result.reason.is_some() {
        return result;
    }
    let started = Instant::now();
    let mut ctx = Ctx::new(addr, proto, opts.plan.timeout, nonce, case.name);
    let outcome = (case.run)(&mut ctx);
    result.exchanges = ctx.into_transcript();
    result.seconds = started.elapsed().as_secs_f64();
    match outcome {
        Ok(()) => result.status = Status::Passed,
        Err(fail) => {
            result.status = if fail.skip {
                Status::Skipped
            } else {
                Status::Failed
            };
            result.reason = Some(fail.why);
        }
    }
    result
}
