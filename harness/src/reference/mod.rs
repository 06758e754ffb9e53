//! The bundled reference adapter: a correct adapter, in process and as a process.
