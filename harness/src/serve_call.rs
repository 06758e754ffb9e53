//! Serves one adapter-protocol call on stdin/stdout with an in-process adapter.
