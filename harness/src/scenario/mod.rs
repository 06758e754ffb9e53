//! Scenario files: parsing (with spans), validation, and conversion into a
//! [`model::Scenario`].

pub mod model;
