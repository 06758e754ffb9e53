//! `lostreply`: see `lostreply --help`. Thin on purpose: everything lives in the `lostreply_cli` library.

// The binary's allocator only: a library user keeps the allocator of their own
// binary. Why mimalloc: see the workspace Cargo.toml.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(lostreply_cli::main());
}
