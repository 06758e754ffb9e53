//! What a value hands the report's writer through serde's data model, which
//! has no way to say "this is already JSON text" or "write these items on
//! two threads": a newtype or tuple struct of a reserved name, with a
//! thread-local flag set around the call as proof that the writer, and not
//! another serializer, took it. Apart from the writer and from the values
//! that hand over, so that each imports it and neither imports the other.

use std::cell::{Cell, RefCell};

use lostreply_text::SharedStr;

/// The newtype name under which `write_shared` hands its text over.
pub(super) const SHARED_TOKEN: &str = "$lostreply_reports::pretty::SharedJson";

/// The newtype name under which `serialize_chunked` hands its items over.
pub(super) const CHUNKED_TOKEN: &str = "$lostreply_reports::pretty::Chunked";

/// The tuple-struct name of the sequence whose fields are pasted chunks.
pub(super) const PASTED_TOKEN: &str = "$lostreply_reports::pretty::Pasted";

thread_local! {
    /// Set by `write_shared` around its call, cleared by the serializer when
    /// it takes the text: proof that the text reached it.
    pub(super) static PENDING: Cell<bool> = const { Cell::new(false) };
    /// The tail of the shared value being handed over, if it has one: the
    /// serializer re-indents it after the head, where the head left off.
    pub(super) static TAIL: RefCell<Option<SharedStr>> = const { RefCell::new(None) };
    /// Set by `serialize_chunked` around its call, cleared by the writer
    /// when it takes the items.
    pub(super) static PENDING_CHUNKED: Cell<bool> = const { Cell::new(false) };
    /// The writer's depth where the array starts, recorded for the `Chunked`
    /// it is about to write (`None` when none is pending).
    pub(super) static DEPTH: Cell<Option<usize>> = const { Cell::new(None) };
}
