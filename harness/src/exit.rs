//! The documented exit codes of `lostreply`.

/// Everything held.
pub const OK: i32 = 0;
/// At least one invariant or expectation was violated.
pub const VIOLATION: i32 = 1;
/// Bad input or usage: a scenario that does not parse, an unknown flag.
pub const BAD_INPUT: i32 = 2;
/// The adapter or the infrastructure failed (no violation was proven).
pub const ADAPTER_OR_INFRA: i32 = 3;

/// The exit code of a finished run: a proven violation outranks errors.
pub fn for_report(report: &lostreply_reports::model::Report) -> i32 {
    let t = report.totals();
    if t.violated > 0 {
        VIOLATION
    } else if t.adapter_errors > 0 || t.infra_errors > 0 {
        ADAPTER_OR_INFRA
    } else {
        OK
    }
}
