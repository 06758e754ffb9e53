//! MCP client profiles: the time limits real MCP clients put on a tool call,
//! with the figures those clients really use (docs/mcp.md, "Client windows"),
//! and the one factor that scales them down so a scenario runs in milliseconds.
//!
//! A scenario names a profile, a `scale`, and overrides written in real
//! figures too; the adapter is given the scaled windows
//! ([`McpClient::contract`](crate::scenario::client_profiles::McpClient::contract)),
//! the report shows both.

use std::time::Duration;

use crate::protocol::ClientWindows;

/// What restarts an idle window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleReset {
    /// Any byte on the stream (an SSE comment, an event, a progress notification).
    Bytes,
    /// Progress notifications only (the TypeScript SDK's `resetTimeoutOnProgress: true`).
    Progress,
}

impl IdleReset {
    /// The name in scenarios and in the adapter protocol (`idle_resets_on`).
    pub fn name(self) -> &'static str {
        match self {
            IdleReset::Bytes => "bytes",
            IdleReset::Progress => "progress",
        }
    }
}

/// A client's time limits on one tool call. `None`: the client has no such limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Windows {
    /// Counted from the request, whatever arrives.
    pub wall_clock: Option<Duration>,
    /// Counts silence on the stream; restarts as `idle_resets_on` says.
    pub idle: Option<Duration>,
    /// Stops at the first response byte.
    pub first_byte: Option<Duration>,
    /// Calls running past this are moved to the background (the client stops
    /// waiting and reports later).
    pub background_after: Option<Duration>,
    /// What restarts the idle window.
    pub idle_resets_on: IdleReset,
}

impl Windows {
    /// No limit at all (`custom` before its overrides).
    pub const NONE: Windows = Windows {
        wall_clock: None,
        idle: None,
        first_byte: None,
        background_after: None,
        idle_resets_on: IdleReset::Bytes,
    };

    /// The four windows by name, in the order docs and reports list them.
    pub fn named(&self) -> [(&'static str, Option<Duration>); 4] {
        [
            ("wall_clock", self.wall_clock),
            ("idle", self.idle),
            ("first_byte", self.first_byte),
            ("background_after", self.background_after),
        ]
    }

    /// The shortest limit the client has, if any (the moment it gives up at the latest
    /// when nothing at all arrives).
    pub fn shortest(&self) -> Option<Duration> {
        self.named().into_iter().filter_map(|(_, w)| w).min()
    }

    /// Every window multiplied by `scale` ([`scale_duration`]).
    pub fn scaled(&self, scale: f64) -> Windows {
        let s = |w: Option<Duration>| w.map(|w| scale_duration(w, scale));
        Windows {
            wall_clock: s(self.wall_clock),
            idle: s(self.idle),
            first_byte: s(self.first_byte),
            background_after: s(self.background_after),
            idle_resets_on: self.idle_resets_on,
        }
    }
}

/// A named client profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    /// `claude-code-http`, ...
    pub name: &'static str,
    /// Its windows, in real figures.
    pub windows: Windows,
    /// Where the figures come from (docs/mcp.md), for the docs' table.
    pub source: &'static str,
    /// The client has no default limit: the scenario must give `wall_clock`
    /// (Python `mcp`: `read_timeout_seconds`).
    pub needs_wall_clock: bool,
}

const fn minutes(n: u64) -> Duration {
    Duration::from_secs(n * 60)
}

/// Claude Code's per-tool-call limit when the server's `timeout` and
/// `MCP_TOOL_TIMEOUT` are unset: 100,000,000 ms, about 28 hours.
pub const CLAUDE_CODE_TOOL_TIMEOUT: Duration = Duration::from_millis(100_000_000);

/// Every profile, in the order docs and messages list them.
pub const PROFILES: [Profile; 7] = [
    Profile {
        name: "claude-code-http",
        windows: Windows {
            wall_clock: Some(CLAUDE_CODE_TOOL_TIMEOUT),
            idle: Some(minutes(5)),
            first_byte: Some(Duration::from_secs(60)),
            background_after: Some(minutes(2)),
            idle_resets_on: IdleReset::Bytes,
        },
        source: "Claude Code over HTTP/SSE: per-tool-call limit from the server's `timeout` in \
                 `.mcp.json` (overrides `MCP_TOOL_TIMEOUT`; about 28 h unset), idle window 5 min \
                 (`CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT`), first-byte timer 60 s (the greatest of 60 s, \
                 the tool timeout and `MCP_TIMEOUT`; stops at the first byte), calls past 2 min \
                 moved to background tasks",
        needs_wall_clock: false,
    },
    Profile {
        name: "claude-code-stdio",
        windows: Windows {
            wall_clock: Some(CLAUDE_CODE_TOOL_TIMEOUT),
            idle: Some(minutes(30)),
            first_byte: None,
            background_after: Some(minutes(2)),
            idle_resets_on: IdleReset::Bytes,
        },
        source: "Claude Code over stdio: the same per-tool-call limit, idle window 30 min, no \
                 first-byte timer, calls past 2 min moved to background tasks",
        needs_wall_clock: false,
    },
    Profile {
        name: "cline",
        windows: Windows {
            wall_clock: Some(Duration::from_secs(60)),
            idle: None,
            first_byte: None,
            background_after: None,
            idle_resets_on: IdleReset::Bytes,
        },
        source: "Cline: `timeout` in seconds; a known defect killed calls at about 60 s whatever \
                 the setting",
        needs_wall_clock: false,
    },
    Profile {
        name: "python-mcp",
        windows: Windows::NONE,
        source: "Python `mcp` 2.x: no default limit; `read_timeout_seconds` per session or call \
                 (the scenario's `wall_clock`); never reset by progress; on expiry `McpError` \
                 -32001 and a `notifications/cancelled`",
        needs_wall_clock: true,
    },
    Profile {
        name: "typescript-sdk",
        windows: Windows {
            wall_clock: Some(Duration::from_secs(60)),
            idle: None,
            first_byte: None,
            background_after: None,
            idle_resets_on: IdleReset::Bytes,
        },
        source: "TypeScript SDK 1.x: `DEFAULT_REQUEST_TIMEOUT_MSEC` 60 s per request, \
                 `resetTimeoutOnProgress: false`; -32001 on expiry, sends `notifications/cancelled`",
        needs_wall_clock: false,
    },
    Profile {
        name: "typescript-sdk-reset-on-progress",
        windows: Windows {
            wall_clock: None,
            idle: Some(Duration::from_secs(60)),
            first_byte: None,
            background_after: None,
            idle_resets_on: IdleReset::Progress,
        },
        source: "TypeScript SDK 1.x with `resetTimeoutOnProgress: true`: the 60 s timer restarts \
                 at each progress notification (no `maxTotalTimeout`)",
        needs_wall_clock: false,
    },
    Profile {
        name: "custom",
        windows: Windows::NONE,
        source: "no figures: every window is the scenario's",
        needs_wall_clock: false,
    },
];

/// The profile called `name`.
pub fn profile(name: &str) -> Option<&'static Profile> {
    PROFILES.iter().find(|p| p.name == name)
}

/// The profiles' names, for messages.
pub fn profile_names() -> Vec<&'static str> {
    PROFILES.iter().map(|p| p.name).collect()
}

/// `real × scale`, rounded to the millisecond (the precision of the adapter
/// protocol's windows and of every real-time wait). Saturates rather than
/// overflowing; a `scale` outside (0, 1] is the caller's mistake (validation
/// rejects it) and is clamped.
pub fn scale_duration(real: Duration, scale: f64) -> Duration {
    let scale = if scale.is_finite() {
        scale.clamp(0.0, 1.0)
    } else {
        1.0
    };
    let ms = (real.as_millis() as f64 * scale).round();
    // `ms` is finite and at most `real`'s milliseconds, so it fits back.
    Duration::from_millis(ms as u64)
}

/// The client windows of an MCP scenario: the profile's figures with the
/// scenario's overrides (real), and the factor that scales them.
#[derive(Debug, Clone, PartialEq)]
pub struct McpClient {
    /// The profile's name.
    pub profile: String,
    /// 0 < scale ≤ 1.
    pub scale: f64,
    /// Real figures: the profile's, with the scenario's overrides.
    pub real: Windows,
}

impl McpClient {
    /// What the adapter's MCP client is given (and the server races).
    pub fn scaled(&self) -> Windows {
        self.real.scaled(self.scale)
    }

    /// A real duration of the scenario (a fault's `work`, `every`, `late`), scaled.
    pub fn scale(&self, real: Duration) -> Duration {
        scale_duration(real, self.scale)
    }

    /// The windows as the adapter protocol carries them (scaled, in ms).
    pub fn contract(&self) -> ClientWindows {
        let scaled = self.scaled();
        let ms = |w: Option<Duration>| w.map(|w| u64::try_from(w.as_millis()).unwrap_or(u64::MAX));
        ClientWindows::new(self.profile.as_str(), self.scale)
            .with_wall_clock_ms(ms(scaled.wall_clock))
            .with_idle_ms(ms(scaled.idle), scaled.idle_resets_on.name())
            .with_first_byte_ms(ms(scaled.first_byte))
            .with_background_after_ms(ms(scaled.background_after))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_profiles_hold_the_real_figures() {
        let claude = profile("claude-code-http").unwrap().windows;
        assert_eq!(claude.wall_clock, Some(Duration::from_millis(100_000_000)));
        assert_eq!(claude.idle, Some(Duration::from_secs(300)));
        assert_eq!(claude.first_byte, Some(Duration::from_secs(60)));
        assert_eq!(claude.background_after, Some(Duration::from_secs(120)));

        let stdio = profile("claude-code-stdio").unwrap().windows;
        assert_eq!(stdio.idle, Some(Duration::from_secs(1800)));
        assert_eq!(stdio.first_byte, None);

        let cline = profile("cline").unwrap().windows;
        assert_eq!(cline.wall_clock, Some(Duration::from_secs(60)));
        assert_eq!((cline.idle, cline.first_byte), (None, None));

        let python = profile("python-mcp").unwrap();
        assert_eq!(python.windows, Windows::NONE);
        assert!(python.needs_wall_clock);

        let ts = profile("typescript-sdk").unwrap().windows;
        assert_eq!(ts.wall_clock, Some(Duration::from_secs(60)));
        assert_eq!(ts.idle, None);

        let reset = profile("typescript-sdk-reset-on-progress").unwrap().windows;
        assert_eq!(reset.wall_clock, None);
        assert_eq!(reset.idle, Some(Duration::from_secs(60)));
        assert_eq!(reset.idle_resets_on, IdleReset::Progress);

        assert_eq!(profile("custom").unwrap().windows, Windows::NONE);
        assert!(profile("cursor").is_none());
        assert_eq!(profile_names().len(), 7);
    }

    #[test]
    fn scaling_multiplies_every_window_to_the_millisecond() {
        assert_eq!(
            scale_duration(Duration::from_secs(360), 0.001),
            Duration::from_millis(360)
        );
        assert_eq!(
            scale_duration(CLAUDE_CODE_TOOL_TIMEOUT, 0.001),
            Duration::from_secs(100)
        );
        // Rounded, not truncated: 1.5 ms is 2 ms.
        assert_eq!(
            scale_duration(Duration::from_millis(1500), 0.001),
            Duration::from_millis(2)
        );
        assert_eq!(
            scale_duration(Duration::from_millis(1), 1.0),
            Duration::from_millis(1)
        );
        let client = McpClient {
            profile: "claude-code-http".to_owned(),
            scale: 0.001,
            real: profile("claude-code-http").unwrap().windows,
        };
        let scaled = client.scaled();
        assert_eq!(scaled.idle, Some(Duration::from_millis(300)));
        assert_eq!(scaled.first_byte, Some(Duration::from_millis(60)));
        assert_eq!(scaled.background_after, Some(Duration::from_millis(120)));
        assert_eq!(scaled.shortest(), Some(Duration::from_millis(60)));
        let wire = client.contract();
        assert_eq!(wire.wall_clock_ms, Some(100_000));
        assert_eq!(wire.idle_ms, Some(300));
        assert_eq!(wire.first_byte_ms, Some(60));
        assert_eq!(wire.background_after_ms, Some(120));
        assert_eq!(wire.idle_resets_on, "bytes");
        assert_eq!(wire.profile, "claude-code-http");
        assert_eq!(
            client.scale(Duration::from_secs(360)),
            Duration::from_millis(360)
        );
    }
}
