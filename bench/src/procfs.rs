//! What Linux says about a process and the machine: resident memory from
//! `/proc/<pid>/status`, the peak reset through `/proc/self/clear_refs`, and the
//! machine facts a figure must be printed with (cores, CPU, kernel, load).

use std::path::Path;

/// Resident memory of a process, in KiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Memory {
    /// `VmRSS`: resident now.
    pub rss_kib: u64,
    /// `VmHWM`: the peak resident since start (or since the last reset).
    pub hwm_kib: u64,
}

/// Reads `VmRSS` and `VmHWM` of a process (`None` for this one).
pub fn memory(pid: Option<u32>) -> Option<Memory> {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/status"),
        None => "/proc/self/status".to_owned(),
    };
    let text = std::fs::read_to_string(path).ok()?;
    parse_status(&text)
}

/// `VmRSS` and `VmHWM` out of a `/proc/<pid>/status` text.
pub fn parse_status(text: &str) -> Option<Memory> {
    let field = |name: &str| -> Option<u64> {
        let line = text.lines().find(|l| l.starts_with(name))?;
        let value = line[name.len()..].trim().trim_end_matches("kB").trim();
        value.parse().ok()
    };
    Some(Memory {
        rss_kib: field("VmRSS:")?,
        hwm_kib: field("VmHWM:")?,
    })
}

/// Resets this process's `VmHWM` to its current resident size (Linux 4.0 and
/// later), so that the next peak read is the peak of what runs next. Returns
/// false where that is not possible; the peak then includes earlier work.
pub fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The machine a figure came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    /// Cores this process may use.
    pub nproc: usize,
    /// `model name` of the first CPU in `/proc/cpuinfo`.
    pub cpu: String,
    /// `/proc/sys/kernel/osrelease`.
    pub kernel: String,
    /// 1, 5 and 15 minute load averages.
    pub load: [f64; 3],
}

/// Reads the machine's facts; unknown ones are `"unknown"` and zero.
pub fn machine() -> Machine {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".to_owned());
    let kernel = read_trimmed(Path::new("/proc/sys/kernel/osrelease"))
        .unwrap_or_else(|| "unknown".to_owned());
    Machine {
        nproc: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        cpu,
        kernel,
        load: load_average(),
    }
}

/// The 1, 5 and 15 minute load averages (zeros if unreadable).
pub fn load_average() -> [f64; 3] {
    let text = read_trimmed(Path::new("/proc/loadavg")).unwrap_or_default();
    let mut out = [0.0; 3];
    for (slot, word) in out.iter_mut().zip(text.split_whitespace()) {
        *slot = word.parse().unwrap_or(0.0);
    }
    out
}

fn read_trimmed(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn status_fields_are_read_in_kib() {
        let text = "Name:\tx\nVmHWM:\t   20480 kB\nVmRSS:\t   10240 kB\n";
        assert_eq!(
            parse_status(text),
            Some(Memory {
                rss_kib: 10240,
                hwm_kib: 20480
            })
        );
        assert_eq!(parse_status("Name:\tx\n"), None);
    }

    #[test]
    fn this_process_has_a_resident_size() {
        let m = memory(None).unwrap();
        assert!(m.rss_kib > 0 && m.hwm_kib >= m.rss_kib);
    }
}
