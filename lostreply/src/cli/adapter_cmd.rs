//! `lostreply adapter NAME CALL`: a bundled in-process adapter served over the
//! process protocol, so the same code can be certified both ways.

use clap::Args;

use lostreply_harness::exit;

#[derive(Debug, Args)]
pub(super) struct AdapterArgs {
    /// The bundled adapter (reference).
    name: String,
    /// The call: execute, reconcile, webhook, resolve or status.
    call: String,
}

pub(super) async fn adapter(args: AdapterArgs) -> i32 {
    let Some(factory) = crate::bundled::adapter(&args.name) else {
        eprintln!(
            "lostreply adapter: no bundled adapter named {:?} (bundled: {})",
            args.name,
            crate::bundled::ADAPTERS.join(", ")
        );
        return exit::BAD_INPUT;
    };
    let state_dir = match lostreply_harness::serve_call::state_dir_from_env() {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("lostreply adapter: {e}");
            return exit::BAD_INPUT;
        }
    };
    match lostreply_harness::serve_call::serve_call(
        factory.as_ref(),
        &args.call,
        &state_dir,
        tokio::io::stdin(),
        tokio::io::stdout(),
    )
    .await
    {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("lostreply adapter {}: {e}", args.name);
            if e.is_bad_input() {
                exit::BAD_INPUT
            } else {
                exit::ADAPTER_OR_INFRA
            }
        }
    }
}
