//! Embeds the built-in scenario library (`../scenarios/*.yaml`) into the binary,
//! so `lostreply run` works from any directory and an installed binary carries it.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    // Read when the script runs, not when it was compiled: one compiled
    // script may serve checkouts at other paths that share a target dir.
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dir = Path::new(&manifest).join("../scenarios");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut names: Vec<String> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".yaml") || n.ends_with(".yml"))
            .collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    let mut out = String::from("/// The built-in scenarios: (file name, text), sorted by name.\npub static BUILTIN_SCENARIOS: &[(&str, &str)] = &[\n");
    for name in &names {
        let path = dir.join(name);
        println!("cargo:rerun-if-changed={}", path.display());
        let _ = writeln!(
            out,
            "    ({name:?}, include_str!({:?})),",
            path.display().to_string()
        );
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("builtin_scenarios.rs");
    std::fs::write(dest, out).expect("OUT_DIR is writable");
}
