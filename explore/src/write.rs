//! What an exploration leaves behind: each finding as a commented scenario
//! file (`<name>.yaml`, named after the invariant or rule it breaks, its id the one it ran under, so the command in
//! its header reruns it with the same seeds), the HTML page of its run
//! (`<name>.html`, with the timeline), and `explore.json`, the summary
//! of the space explored.

use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use lostreply_harness::driver::shell_quote;
use lostreply_reports::model::{AdapterInfo, Report, SCHEMA_VERSION};

use crate::search::{Explored, Finding};

/// The command that reruns a finding's file.
pub fn reproduce(adapter_flags: &str, seed: u64, file: &Path) -> String {
    format!(
        "lostreply run {adapter_flags} --seed {seed} {}",
        shell_quote(&file.display().to_string())
    )
}

/// The scenario file of a finding, with its story in comments.
pub fn finding_yaml(f: &Finding, seed: u64, command: &str) -> String {
    let mut comment = vec![
        format!(
            "lostreply explore: this situation breaks {}.",
            f.broken.label()
        ),
        format!("  {}", f.message),
        format!(
            "Situation {} of seed {seed} had {} operations, {} steps and {} fault rules; shrunk in {} runs to {} operations, {} steps and {} fault rules.",
            f.index,
            f.original.amounts.len(),
            f.original.steps.len(),
            f.original.faults.len(),
            f.shrink_runs,
            f.shrunk.amounts.len(),
            f.shrunk.steps.len(),
            f.shrunk.faults.len()
        ),
        "No `expect` section: explore judges the invariants and the protocol's rules alone.".to_owned(),
        format!("Rerun: {command}"),
    ];
    comment.push(String::new());
    f.shrunk
        .to_yaml(&f.id, &comment, f.pace)
        .replace("# \n", "#\n")
}

/// Writes every finding (its file and page) and `explore.json` into `dir`;
/// returns the findings' files with their commands, in order.
pub fn write_all(
    dir: &Path,
    explored: &Explored,
    seed: u64,
    adapter: &AdapterInfo,
    adapter_flags: &str,
) -> io::Result<Vec<(PathBuf, String)>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for f in &explored.findings {
        let file = dir.join(format!("{}.yaml", f.broken.name()));
        let command = reproduce(adapter_flags, seed, &file);
        std::fs::write(&file, finding_yaml(f, seed, &command))?;
        let mut scenario = f.report.clone();
        scenario.path = file.display().to_string();
        scenario.reproduce.clone_from(&command);
        let report = Report::builder()
            .schema_version(SCHEMA_VERSION)
            .tool_version(env!("CARGO_PKG_VERSION").to_owned())
            .adapter(adapter.clone())
            .seed(seed)
            .duration_ms(scenario.duration_ms)
            .scenarios(vec![scenario])
            .build();
        let mut page = io::BufWriter::new(std::fs::File::create(
            dir.join(format!("{}.html", f.broken.name())),
        )?);
        lostreply_reports::html::write_html(&mut page, &report)?;
        page.flush()?;
        written.push((file, command));
    }
    let summary = summary_json(explored, seed, adapter, &written);
    std::fs::write(
        dir.join("explore.json"),
        serde_json::to_string_pretty(&summary).unwrap_or_default() + "\n",
    )?;
    Ok(written)
}

fn summary_json(
    explored: &Explored,
    seed: u64,
    adapter: &AdapterInfo,
    written: &[(PathBuf, String)],
) -> serde_json::Value {
    let findings: Vec<serde_json::Value> = explored
        .findings
        .iter()
        .zip(written)
        .map(|(f, (file, command))| {
            serde_json::json!({
                "broken": f.broken.name(),
                "label": f.broken.label(),
                "message": f.message,
                "situation": f.index,
                "file": file.display().to_string(),
                "steps": f.shrunk.steps.len(),
                "operations": f.shrunk.amounts.len(),
                "faults": f.shrunk.faults.len(),
                "shrink_runs": f.shrink_runs,
                "reproduce": command,
            })
        })
        .collect();
    serde_json::json!({
        "adapter": adapter.name,
        "seed": seed,
        "situations": explored.situations,
        "invalid": explored.invalid,
        "adapter_errors": explored.adapter_errors,
        "infra_errors": explored.infra_errors,
        "elapsed_ms": explored.elapsed.as_millis() as u64,
        "findings": findings,
        "space": explored.space,
    })
}
