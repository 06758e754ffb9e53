//! `lostreply list`: the scenarios a `run` with the same selection flags would
//! take, without running them (so `--shard K/N` can be checked for free),
//! then, unsharded, the opt-in ones (`mcp`) that run leaves out, each marked
//! with the flag that takes it: every scenario is listed with its tags.

use clap::Args;
use lostreply_harness::exit;

use super::select::{SelectArgs, Selection};

#[derive(Debug, Args)]
pub(super) struct ListArgs {
    #[command(flatten)]
    select: SelectArgs,
}

pub(super) fn list(args: ListArgs) -> i32 {
    let Selection {
        scenarios,
        shard,
        left_out,
        left_out_note,
    } = match args.select.select() {
        Ok(s) => s,
        Err(e) => return e.report("lostreply list"),
    };
    for s in &scenarios {
        println!("{}", line(s));
    }
    // A shard is a part of what run takes; the left-out ones belong to no shard.
    if shard.is_none() {
        for (s, missing) in &left_out {
            let flags: Vec<String> = missing.iter().map(|t| format!("--tag {t}")).collect();
            println!("{}  (left out: {})", line(s), flags.join(" "));
        }
        if let Some(note) = left_out_note {
            eprintln!("{note}");
        }
    }
    // On stderr, so that stdout stays one line per scenario.
    if let Some(shard) = shard {
        eprintln!(
            "shard {}/{}: {} in this shard, of {} selected",
            shard.index,
            shard.total,
            match scenarios.len() {
                1 => "1 scenario".to_owned(),
                n => format!("{n} scenarios"),
            },
            shard.selected
        );
    }
    exit::OK
}

/// One scenario: its case, id, tags and title.
fn line(s: &lostreply_harness::scenario::model::Scenario) -> String {
    let case = s
        .case
        .map(|c| format!("case {c:>2}"))
        .unwrap_or_else(|| "       ".to_owned());
    format!("{case}  {:<40} [{}]  {}", s.id, s.tags.join(", "), s.title)
}
