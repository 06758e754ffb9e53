//! `lostreply list`: the scenarios a `run` with the same selection flags would
//! take, without running them (so `--shard K/N` can be checked for free).

use clap::Args;
use lostreply_harness::exit;

use super::select::{SelectArgs, Selection};

#[derive(Debug, Args)]
pub(super) struct ListArgs {
    #[command(flatten)]
    select: SelectArgs,
}

pub(super) fn list(args: ListArgs) -> i32 {
    let Selection { scenarios, shard } = match args.select.select() {
        Ok(s) => s,
        Err(e) => return e.report("lostreply list"),
    };
    for s in &scenarios {
        let case = s
            .case
            .map(|c| format!("case {c:>2}"))
            .unwrap_or_else(|| "       ".to_owned());
        println!("{case}  {:<40} [{}]  {}", s.id, s.tags.join(", "), s.title);
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
