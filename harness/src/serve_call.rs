//! Serves one adapter-protocol call on stdin/stdout with an in-process adapter,
//! so any [`AdapterFactory`] can also be run as a process adapter
//! (`lostreply adapter reference <call>`): read the one JSON request, build a
//! fresh adapter over the state directory, dispatch, write the one JSON reply.

use std::path::{Path, PathBuf};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::adapter::{AdapterFactory, AdapterFailure};
use crate::dispatch::{dispatch, CallRequest, DispatchError};
use crate::protocol::{CallName, PROTOCOL_VERSION};

/// Where a process adapter finds its durable store.
pub const STATE_DIR_ENV: &str = "LOSTREPLY_STATE_DIR";

/// Largest request read from stdin. A request is a few kilobytes; this bound
/// keeps a runaway writer from filling memory.
pub const MAX_REQUEST_BYTES: u64 = 8 * 1024 * 1024;

/// Why a call could not be served. Every variant says what and where.
#[derive(Debug, thiserror::Error)]
pub enum ServeCallError {
    /// The call name is not one of the five.
    #[error("unknown call {0:?}: expected execute, reconcile, webhook, resolve or status")]
    UnknownCall(String),
    /// `LOSTREPLY_STATE_DIR` is unset or empty.
    #[error("{STATE_DIR_ENV} is not set: a process adapter needs its state directory")]
    NoStateDir,
    /// stdin could not be read.
    #[error("cannot read the {call} request from stdin: {source}")]
    Read {
        /// The call.
        call: &'static str,
        /// The I/O error.
        source: std::io::Error,
    },
    /// stdin held more than [`MAX_REQUEST_BYTES`].
    #[error("the {call} request on stdin is larger than {MAX_REQUEST_BYTES} bytes")]
    TooLarge {
        /// The call.
        call: &'static str,
    },
    /// The request is not the JSON the call expects.
    #[error("bad {call} request on stdin: {source} (line {line}, column {column})", line = source.line(), column = source.column())]
    BadRequest {
        /// The call.
        call: &'static str,
        /// The parse error, with its position.
        source: serde_json::Error,
    },
    /// The request speaks another protocol version.
    #[error(
        "the {call} request says protocol {found}; this adapter speaks protocol {PROTOCOL_VERSION}"
    )]
    Protocol {
        /// The call.
        call: &'static str,
        /// The version in the request.
        found: u32,
    },
    /// The factory could not build an adapter over the state directory.
    #[error("cannot build adapter {adapter} over {state_dir}: {source}")]
    Build {
        /// The factory's name.
        adapter: String,
        /// The state directory.
        state_dir: PathBuf,
        /// What failed.
        source: AdapterFailure,
    },
    /// The adapter's call failed.
    #[error("adapter {adapter} failed in {call}: {source}")]
    Adapter {
        /// The factory's name.
        adapter: String,
        /// The call.
        call: &'static str,
        /// What failed.
        source: AdapterFailure,
    },
    /// The reply could not be written to stdout.
    #[error("cannot write the {call} reply to stdout: {source}")]
    Write {
        /// The call.
        call: &'static str,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl ServeCallError {
    /// True when the caller got something wrong (call name, request, size,
    /// protocol, environment): exit code 2. False for the adapter's own
    /// failures and I/O: exit code 3.
    pub fn is_bad_input(&self) -> bool {
        match self {
            ServeCallError::UnknownCall(_)
            | ServeCallError::NoStateDir
            | ServeCallError::TooLarge { .. }
            | ServeCallError::BadRequest { .. }
            | ServeCallError::Protocol { .. } => true,
            ServeCallError::Read { .. }
            | ServeCallError::Build { .. }
            | ServeCallError::Adapter { .. }
            | ServeCallError::Write { .. } => false,
        }
    }
}

/// The state directory from [`STATE_DIR_ENV`].
pub fn state_dir_from_env() -> Result<PathBuf, ServeCallError> {
    match std::env::var_os(STATE_DIR_ENV) {
        Some(dir) if !dir.is_empty() => Ok(PathBuf::from(dir)),
        Some(_) | None => Err(ServeCallError::NoStateDir),
    }
}

/// A whole process adapter's `main` over stdin and stdout: reads the state
/// directory from the environment, serves `call` with `factory`, and returns
/// the documented exit code (0 served; 2 bad input or usage; 3 the adapter
/// failed), having said why on stderr prefixed with `label`. Every binary that
/// serves an in-process adapter as a process (`lostreply adapter`, the example
/// binaries) goes through here.
pub async fn serve_stdio(factory: &dyn AdapterFactory, call: &str, label: &str) -> i32 {
    let state_dir = match state_dir_from_env() {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("{label}: {e}");
            return crate::exit::BAD_INPUT;
        }
    };
    match serve_call(
        factory,
        call,
        &state_dir,
        tokio::io::stdin(),
        tokio::io::stdout(),
    )
    .await
    {
        Ok(()) => crate::exit::OK,
        Err(e) => {
            eprintln!("{label} {call}: {e}");
            if e.is_bad_input() {
                crate::exit::BAD_INPUT
            } else {
                crate::exit::ADAPTER_OR_INFRA
            }
        }
    }
}

/// Serves one call: reads one JSON request from `stdin` (to its end), builds a
/// fresh adapter from `factory` over `state_dir`, runs the call named `call`
/// (`execute`, `reconcile`, `webhook`, `resolve` or `status`) and writes its
/// reply as one line of JSON to `stdout`. Nothing is written on error; the
/// caller prints the error on stderr and exits non-zero.
pub async fn serve_call<R, W>(
    factory: &dyn AdapterFactory,
    call: &str,
    state_dir: &Path,
    stdin: R,
    mut stdout: W,
) -> Result<(), ServeCallError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let call = CallName::parse(call).ok_or_else(|| ServeCallError::UnknownCall(call.to_owned()))?;
    let name = call.as_str();
    let input = read_request(stdin, name).await?;
    let request = CallRequest::from_slice(call, &input)
        .map_err(|source| ServeCallError::BadRequest { call: name, source })?;
    check_protocol(request.common().protocol, name)?;
    let adapter = factory
        .build(state_dir)
        .map_err(|source| ServeCallError::Build {
            adapter: factory.name(),
            state_dir: state_dir.to_owned(),
            source,
        })?;
    let reply = match dispatch(adapter.as_ref(), request).await {
        Ok(reply) => reply.to_string(),
        Err(DispatchError::Adapter(source)) => {
            return Err(ServeCallError::Adapter {
                adapter: factory.name(),
                call: name,
                source,
            })
        }
        // Replies are plain structs of strings, bools and enums: serialising them
        // cannot fail, but an error still becomes valid JSON rather than a panic.
        Err(DispatchError::Reply(e)) => serde_json::json!({"error": e.to_string()}).to_string(),
    };
    let write = |source| ServeCallError::Write { call: name, source };
    stdout.write_all(reply.as_bytes()).await.map_err(write)?;
    stdout.write_all(b"\n").await.map_err(write)?;
    stdout.flush().await.map_err(write)?;
    Ok(())
}

async fn read_request<R: AsyncRead + Unpin>(
    stdin: R,
    call: &'static str,
) -> Result<Vec<u8>, ServeCallError> {
    let mut input = Vec::new();
    // Read one byte past the limit to tell "exactly at the limit" from "over it".
    stdin
        .take(MAX_REQUEST_BYTES + 1)
        .read_to_end(&mut input)
        .await
        .map_err(|source| ServeCallError::Read { call, source })?;
    if input.len() as u64 > MAX_REQUEST_BYTES {
        return Err(ServeCallError::TooLarge { call });
    }
    Ok(input)
}

fn check_protocol(found: u32, call: &'static str) -> Result<(), ServeCallError> {
    if found == PROTOCOL_VERSION {
        Ok(())
    } else {
        Err(ServeCallError::Protocol { call, found })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::{json, Value};

    use super::*;
    use crate::adapter::Adapter;
    use crate::protocol::{
        ExecuteRequest, OperationRequest, OutcomeKind, OutcomeReply, ResolveRequest, WebhookReply,
        WebhookRequest,
    };

    /// An adapter that knows nothing: every call parses its request (that is
    /// what is under test here) and answers as for an unknown operation.
    struct Blank;

    fn nothing(id: &str) -> OutcomeReply {
        OutcomeReply::new(
            id,
            OutcomeKind::Unknown,
            "no record of this operation in the store",
        )
    }

    #[async_trait::async_trait]
    impl Adapter for Blank {
        async fn execute(&self, r: ExecuteRequest) -> Result<OutcomeReply, AdapterFailure> {
            Ok(nothing(&r.operation.id))
        }
        async fn reconcile(&self, r: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
            Ok(nothing(&r.operation_id))
        }
        async fn webhook(&self, _: WebhookRequest) -> Result<WebhookReply, AdapterFailure> {
            Ok(WebhookReply::REJECTED)
        }
        async fn resolve(&self, r: ResolveRequest) -> Result<OutcomeReply, AdapterFailure> {
            Ok(nothing(&r.operation_id))
        }
        async fn status(&self, r: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
            Ok(nothing(&r.operation_id))
        }
    }

    struct BlankFactory;

    impl AdapterFactory for BlankFactory {
        fn name(&self) -> String {
            "blank".to_owned()
        }
        fn build(&self, _: &Path) -> Result<Box<dyn Adapter>, AdapterFailure> {
            Ok(Box::new(Blank))
        }
    }

    fn common() -> Value {
        json!({
            "protocol": 1,
            "now": "2026-01-01T00:00:00Z",
            "provider": {
                "base_url": "http://127.0.0.1:9",
                "credential": "sk_test_a",
                "contract": {
                    "idempotency": {"mode": "stripe", "header": "Idempotency-Key", "retention_s": 86400},
                    "lookup": {"retrieve": true, "client_reference": true, "list_recent": true},
                    "asynchronous": false,
                    "webhooks": null
                }
            },
            "client_timeout_ms": 250
        })
    }

    fn with(mut base: Value, extra: Value) -> Value {
        let (Value::Object(b), Value::Object(e)) = (&mut base, extra) else {
            unreachable!()
        };
        b.extend(e);
        base
    }

    async fn serve(call: &str, dir: &Path, input: &str) -> Result<Value, ServeCallError> {
        let mut out = Vec::new();
        serve_call(&BlankFactory, call, dir, input.as_bytes(), &mut out).await?;
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.ends_with('\n') && text.lines().count() == 1,
            "{text:?}"
        );
        Ok(serde_json::from_str(&text).unwrap())
    }

    #[tokio::test]
    async fn status_round_trips_through_the_process_protocol() {
        let dir = tempfile::tempdir().unwrap();
        let request = with(common(), json!({"operation_id": "op-1"})).to_string();
        let reply = serve("status", dir.path(), &request).await.unwrap();
        assert_eq!(
            reply,
            json!({"operation_id": "op-1", "outcome": "unknown", "provider_ref": null,
                   "needs_review": false, "evidence": "no record of this operation in the store"})
        );
        // resolve parses its own shape and answers the same for an unknown id.
        let resolve = with(
            common(),
            json!({"operation_id": "op-1", "resolution": {"outcome": "failed", "provider_ref": null,
                    "evidence": "checked the console", "by": "operator"}}),
        );
        let reply = serve("resolve", dir.path(), &resolve.to_string())
            .await
            .unwrap();
        assert_eq!(reply["outcome"], "unknown");
        // A webhook request parses and its reply is the webhook shape.
        let webhook = with(common(), json!({"headers": {}, "body": "{}"}));
        let reply = serve("webhook", dir.path(), &webhook.to_string())
            .await
            .unwrap();
        assert_eq!(reply, json!({"accepted": false, "operation_id": null}));
    }

    #[tokio::test]
    async fn bad_calls_and_bad_json_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let err = serve("exectue", dir.path(), "{}").await.unwrap_err();
        assert!(
            matches!(err, ServeCallError::UnknownCall(ref c) if c == "exectue"),
            "{err}"
        );

        let err = serve("status", dir.path(), "{\"operation_id\": ")
            .await
            .unwrap_err();
        assert!(
            matches!(err, ServeCallError::BadRequest { call: "status", .. }),
            "{err}"
        );
        assert!(err.to_string().contains("line 1"), "{err}");

        // Valid JSON of the wrong shape names the missing field.
        let err = serve("execute", dir.path(), &common().to_string())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("operation"), "{err}");

        let old = with(common(), json!({"protocol": 2, "operation_id": "op-1"}));
        let err = serve("reconcile", dir.path(), &old.to_string())
            .await
            .unwrap_err();
        assert!(
            matches!(err, ServeCallError::Protocol { found: 2, .. }),
            "{err}"
        );
    }

    #[tokio::test]
    async fn oversized_requests_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let huge = vec![b' '; usize::try_from(MAX_REQUEST_BYTES).unwrap() + 1];
        let mut out = Vec::new();
        let err = serve_call(&BlankFactory, "status", dir.path(), &huge[..], &mut out)
            .await
            .unwrap_err();
        assert!(matches!(err, ServeCallError::TooLarge { .. }), "{err}");
        assert!(out.is_empty());
    }
}
