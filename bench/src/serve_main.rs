//! `lostreply` under another name (see bench/Cargo.toml): the same library
//! entry and allocator as cli/src/main.rs, so the soak's test serves with
//! the code a user runs.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(lostreply_cli::main());
}
