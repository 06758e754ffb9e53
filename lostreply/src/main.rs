//! `lostreply`: see `lostreply --help`. Thin on purpose: everything lives in the library.

fn main() {
    std::process::exit(lostreply::cli::main());
}
