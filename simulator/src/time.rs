//! Formatting and parsing of simulator-clock instants (ms since the Unix epoch).

use std::cell::RefCell;
use std::fmt::Write as _;

use jiff::Timestamp;

/// The latest instant the clock may reach (jiff's range ends in year 9999).
pub(crate) fn max_clock_ms() -> i64 {
    Timestamp::MAX.as_millisecond()
}

/// The earliest instant the clock may hold.
pub(crate) fn min_clock_ms() -> i64 {
    Timestamp::MIN.as_millisecond()
}

fn timestamp(ms: i64) -> Timestamp {
    // The clock is kept within jiff's range (checked at start, clamped on advance).
    Timestamp::from_millisecond(ms.clamp(min_clock_ms(), max_clock_ms()))
        .unwrap_or(Timestamp::UNIX_EPOCH)
}

/// RFC 3339 in UTC with milliseconds: `2026-01-01T00:00:00.000Z`.
pub fn rfc3339(ms: i64) -> String {
    format!("{:.3}", timestamp(ms))
}

/// Calls `with` on [`rfc3339`] of `ms`. Every object's body carries its
/// `created_at`, and the simulator clock mostly stands still between harness
/// steps, so each thread keeps the last instant it wrote: formatting it for
/// every body would be about a thirtieth of a request's handling.
pub(crate) fn with_rfc3339<R>(ms: i64, with: impl FnOnce(&str) -> R) -> R {
    thread_local! {
        static LAST: RefCell<(i64, String)> = const { RefCell::new((0, String::new())) };
    }
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if last.0 != ms || last.1.is_empty() {
            last.1.clear();
            // Writing into a `String` cannot fail.
            let _ = write!(last.1, "{:.3}", timestamp(ms));
            last.0 = ms;
        }
        with(&last.1)
    })
}

/// An HTTP `Date` header value (IMF-fixdate).
pub(crate) fn http_date(ms: i64) -> String {
    timestamp(ms)
        .strftime("%a, %d %b %Y %H:%M:%S GMT")
        .to_string()
}

/// Parses an RFC 3339 instant (with `Z` or an offset) into ms since the epoch.
pub(crate) fn parse_rfc3339(text: &str) -> Option<i64> {
    text.parse::<Timestamp>().ok().map(|ts| ts.as_millisecond())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses() {
        assert_eq!(rfc3339(1_767_225_600_000), "2026-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_767_225_600_250), "2026-01-01T00:00:00.250Z");
        assert_eq!(
            http_date(1_767_225_600_000),
            "Thu, 01 Jan 2026 00:00:00 GMT"
        );
        assert_eq!(
            parse_rfc3339("2026-01-01T01:00:00+01:00"),
            Some(1_767_225_600_000)
        );
        assert_eq!(
            parse_rfc3339("2026-01-01T00:00:00.250Z"),
            Some(1_767_225_600_250)
        );
        assert_eq!(parse_rfc3339("yesterday"), None);
        assert_eq!(parse_rfc3339("2026-01-01"), None);
    }

    #[test]
    fn an_instant_is_its_own_whichever_was_written_before() {
        for ms in [
            1_767_225_600_000,
            1_767_225_600_250,
            1_767_225_600_250,
            0,
            1_767_225_600_000,
        ] {
            assert_eq!(with_rfc3339(ms, str::to_owned), rfc3339(ms));
        }
    }
}
