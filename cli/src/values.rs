//! Flags whose values are a library's closed set of names (an enum with
//! `ALL` and `name`): clap checks the value, lists the possible ones in
//! `--help` and in its error, and hands the command the enum itself.
//!
//! Why not clap's `ValueEnum` derive on the library's enum: the simulator
//! and the certifier know nothing of clap, and a copy of each enum here
//! would have to be kept in step by hand.

use clap::builder::{PossibleValuesParser, TypedValueParser};
use lostreply_simulator::mcp::Defect;
use lostreply_simulator::IdempotencyMode;

/// A value parser for one of `all`, by `name`.
fn one_of<T>(all: &'static [T], name: fn(T) -> &'static str) -> impl TypedValueParser<Value = T>
where
    T: Copy + Send + Sync + 'static,
{
    PossibleValuesParser::new(all.iter().map(|t| name(*t))).try_map(move |given| {
        all.iter()
            .copied()
            .find(|t| name(*t) == given)
            .ok_or("not one of the possible values")
    })
}

/// `--idempotency MODE` and `certify --simulator MODE`.
pub(crate) fn idempotency_mode() -> impl TypedValueParser<Value = IdempotencyMode> {
    one_of(&IdempotencyMode::ALL, IdempotencyMode::name)
}

/// `--mcp-defect NAME`.
pub(crate) fn mcp_defect() -> impl TypedValueParser<Value = Defect> {
    one_of(&Defect::ALL, Defect::name)
}

/// `certify --only PROBE,...`.
pub(crate) fn probe_name() -> impl TypedValueParser<Value = String> {
    PossibleValuesParser::new(lostreply_certify::probes::names())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Flags {
        #[arg(long, value_parser = idempotency_mode())]
        mode: Option<IdempotencyMode>,
        #[arg(long, value_parser = mcp_defect())]
        defect: Vec<Defect>,
    }

    #[test]
    fn every_name_of_the_library_is_accepted_as_itself() {
        for mode in IdempotencyMode::ALL {
            let flags = Flags::try_parse_from(["t", "--mode", mode.name()]);
            assert_eq!(flags.map(|f| f.mode).ok(), Some(Some(mode)));
        }
        for defect in Defect::ALL {
            let flags = Flags::try_parse_from(["t", "--defect", defect.name()]);
            assert_eq!(flags.map(|f| f.defect).ok(), Some(vec![defect]));
        }
    }

    #[test]
    fn another_name_is_refused_with_the_possible_ones() {
        let error = Flags::try_parse_from(["t", "--mode", "sometimes"]).err();
        let text = error.map(|e| e.to_string()).unwrap_or_default();
        assert!(text.contains("invalid value 'sometimes'"), "{text}");
        assert!(text.contains("stuck_in_flight"), "{text}");
    }
}
