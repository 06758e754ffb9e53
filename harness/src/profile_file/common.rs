//! What every part of reading a profile file shares: its limits, and the
//! collector of its problems. It imports no other part of `profile_file`, so
//! every part can import it.

/// Largest profile file read (the built-in ones are a few kilobytes).
pub const MAX_PROFILE_BYTES: u64 = 256 * 1024;
/// Most resources one profile declares.
pub const MAX_RESOURCES: usize = 64;
/// Deepest nesting of a template or a constant (a provider's envelope is a
/// few levels; the bound keeps every later walk of it shallow).
pub const MAX_TEMPLATE_DEPTH: usize = 16;
/// Most values (leaves and containers) in one template or constant.
pub const MAX_TEMPLATE_NODES: usize = 4096;
/// Most names in one list of a profile (ignored fields, picked arguments, kinds).
pub const MAX_LIST_ITEMS: usize = 64;

/// Collects the problems of one file: the scenario parser's collector, so
/// both kinds of file print alike (order, bound, source line and caret).
pub(crate) type Found<'a> = crate::scenario::error::Diagnostics<'a>;
