//! `lostreply adapter NAME CALL`: a bundled in-process adapter served over the
//! process protocol, so the same code can be certified both ways.

use clap::Args;

use lostreply_harness::exit;

#[derive(Debug, Args)]
pub(super) struct AdapterArgs {
    /// The bundled adapter: reference, a design of the examples (eager, lazy, lookup-first,
    /// try-lock, and the flawed ones), a naive adapter (naive-01-fails-on-timeout, ...).
    name: String,
    /// The call: execute, reconcile, webhook, resolve or status.
    call: String,
}

pub(super) async fn adapter(args: AdapterArgs) -> i32 {
    let Some(factory) = crate::bundled::adapter(&args.name) else {
        eprintln!(
            "lostreply adapter: no bundled adapter named {:?} (bundled: {})",
            args.name,
            crate::bundled::names().join(", ")
        );
        return exit::BAD_INPUT;
    };
    lostreply_harness::serve_call::serve_stdio(
        factory.as_ref(),
        &args.call,
        &format!("lostreply adapter {}", args.name),
    )
    .await
}
