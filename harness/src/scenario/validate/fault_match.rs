//! What HTTP and MCP fault rules share: their `nth`, `times` and `step`
//! counts, and a release at the end of a step.

use std::collections::BTreeSet;

use lostreply_simulator::Release;

use super::declared::Declared;
use crate::scenario::error::Diagnostics;
use crate::scenario::raw::{RawMatch, RawUntil};
use crate::scenario::span::{OneOrMany, Pos, Sp};

/// `nth`, `times` and `step`, shared by HTTP and MCP rules: the counts
/// checked, the steps checked and returned.
pub(super) fn counts_and_steps(
    d: &mut Diagnostics,
    raw: &RawMatch,
    declared: &Declared,
) -> Option<BTreeSet<u32>> {
    if let Some(nth) = &raw.nth {
        if nth.value == 0 {
            d.error(
                nth.pos,
                "nth counts from 1 (nth: 1 is the first matching request)",
            );
        }
    }
    if let Some(times) = &raw.times {
        if times.value == 0 {
            d.error(times.pos, "times counts requests: at least 1");
        }
        if raw.nth.is_some() {
            d.error(
                times.pos,
                "nth and times exclude each other: nth picks one request, times the first N",
            );
        }
    }
    raw.step.as_ref().map(|step| {
        let written: Vec<(u32, Pos)> = match &step.value {
            OneOrMany::One(n) => vec![(*n, step.pos)],
            OneOrMany::Many(list) => list.iter().map(|n| (n.value, n.pos)).collect(),
        };
        if written.is_empty() {
            d.error(step.pos, "an empty list of steps matches nothing");
        }
        for (n, pos) in &written {
            if *n == 0 || *n as usize > declared.step_count {
                d.error(
                    *pos,
                    format!(
                        "step {n} is not a step of this scenario (steps 1 to {})",
                        declared.step_count
                    ),
                );
            }
        }
        written
            .into_iter()
            .map(|(n, _)| n)
            .collect::<BTreeSet<u32>>()
    })
}

pub(super) fn step_end(d: &mut Diagnostics, until: &Sp<RawUntil>, declared: &Declared) -> Release {
    let step = &until.value.end_of_step;
    if step.value == 0 || step.value as usize > declared.step_count {
        d.error(
            step.pos,
            format!(
                "end_of_step {} is not a step of this scenario (steps 1 to {})",
                step.value, declared.step_count
            ),
        );
    }
    Release::StepEnd(step.value.max(1))
}
