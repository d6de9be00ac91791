//! Counters of a reference proxy, served by `GET /metrics` in the Prometheus
//! text format. They are the only state shared between requests besides the
//! event sink; no conversation content is ever kept.

use super::events::{SwitchEvent, SwitchReason};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;

/// One counter family: its name and help text.
struct Family {
    name: &'static str,
    help: &'static str,
}

const REQUESTS: Family = Family {
    name: "continuity_proxy_requests_total",
    help: "Client requests answered, by mode and status returned.",
};
const FAILOVERS: Family = Family {
    name: "continuity_proxy_failovers_total",
    help: "Requests that switched to the fallback, by reason.",
};
const RETRIES: Family = Family {
    name: "continuity_proxy_fallback_429_retries_total",
    help: "Fallback retries after the fallback answered 429.",
};
const ATTEMPTS: Family = Family {
    name: "continuity_proxy_upstream_attempts_total",
    help: "Requests sent to an upstream, by role.",
};
const RETRIES_PRIMARY: Family = Family {
    name: "continuity_proxy_same_route_retries_total",
    help: "Primary retries on the same route before failing over.",
};
const CONTINUATIONS: Family = Family {
    name: "continuity_proxy_continuations_total",
    help: "Streams that broke after their first tokens, by how they were continued.",
};
const CUTS: Family = Family {
    name: "continuity_proxy_streams_cut_total",
    help: "Streams sent with a status that ended without [DONE], by the event's reason (deadline_cut, request_memory_exceeded, ...).",
};
const EVENT_WRITE_ERRORS: Family = Family {
    name: "continuity_proxy_event_write_errors_total",
    help: "Switch events that could not be appended to the events file.",
};

/// The counters of one proxy: per family, rendered label set -> count, so
/// the output order is stable. Counting a label set seen before allocates
/// nothing (the labels are rendered into a reused buffer).
#[derive(Debug, Default)]
pub struct Metrics {
    inner: Mutex<Counters>,
}

#[derive(Debug, Default)]
struct Counters {
    families: BTreeMap<&'static str, BTreeMap<String, u64>>,
    scratch: String,
}

impl Metrics {
    /// Adds `n` to the counter of `family` whose labels `render` writes.
    fn add(&self, family: &Family, n: u64, render: impl FnOnce(&mut String)) {
        let mut guard = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let Counters { families, scratch } = &mut *guard;
        scratch.clear();
        render(scratch);
        let counters = families.entry(family.name).or_default();
        match counters.get_mut(scratch.as_str()) {
            Some(value) => *value += n,
            None => {
                counters.insert(scratch.clone(), n);
            }
        }
    }

    /// Counts one finished request from its switch event.
    pub fn observe(&self, event: &SwitchEvent) {
        let mode = event.mode.as_str();
        self.add(&REQUESTS, 1, |l| {
            let _ = write!(l, "mode=\"{mode}\",status=\"{}\"", event.status);
        });
        if event.reason == SwitchReason::InvalidRequest {
            return;
        }
        let primary = u64::from(event.primary_attempts.max(1));
        self.add(&ATTEMPTS, primary, |l| {
            let _ = write!(l, "mode=\"{mode}\",role=\"primary\"");
        });
        if primary > 1 {
            self.add(&RETRIES_PRIMARY, primary - 1, |l| {
                let _ = write!(l, "mode=\"{mode}\"");
            });
        }
        if let Some(how) = &event.continuation {
            // `failed: <why>` is counted as `failed`: labels stay few.
            let how = how.split(':').next().unwrap_or_default();
            self.add(&CONTINUATIONS, 1, |l| {
                let _ = write!(l, "mode=\"{mode}\",how=\"{how}\"");
            });
        }
        if event.cut {
            self.add(&CUTS, 1, |l| {
                let _ = write!(l, "mode=\"{mode}\",reason=\"{}\"", event.reason);
            });
        }
        // A request switched when it went to another route; a stream cut
        // by the deadline on its only route did not.
        if event.provider_fallback.is_some() || (event.reason.is_failover() && !event.cut) {
            self.add(&FAILOVERS, 1, |l| {
                let _ = write!(l, "mode=\"{mode}\",reason=\"{}\"", event.reason);
            });
        }
        if event.fallback_attempts > 0 {
            let n = u64::from(event.fallback_attempts);
            self.add(&ATTEMPTS, n, |l| {
                let _ = write!(l, "mode=\"{mode}\",role=\"fallback\"");
            });
            self.add(&RETRIES, n - 1, |l| {
                let _ = write!(l, "mode=\"{mode}\"");
            });
        }
    }

    /// Counts an event that could not be written to the events file.
    pub fn event_write_error(&self, mode: &str) {
        self.add(&EVENT_WRITE_ERRORS, 1, |l| {
            let _ = write!(l, "mode=\"{mode}\"");
        });
    }

    /// The value of one counter, 0 when never incremented. `labels` as
    /// rendered, e.g. `mode="history",reason="timeout"`.
    pub fn get(&self, name: &str, labels: &str) -> u64 {
        let guard = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        guard
            .families
            .get(name)
            .and_then(|counters| counters.get(labels))
            .copied()
            .unwrap_or(0)
    }

    /// Every counter in the Prometheus text exposition format (0.0.4).
    pub fn render(&self) -> String {
        let guard = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = String::new();
        for family in [
            &REQUESTS,
            &FAILOVERS,
            &RETRIES,
            &RETRIES_PRIMARY,
            &CONTINUATIONS,
            &ATTEMPTS,
            &CUTS,
            &EVENT_WRITE_ERRORS,
        ] {
            let _ = writeln!(out, "# HELP {} {}", family.name, family.help);
            let _ = writeln!(out, "# TYPE {} counter", family.name);
            let name = family.name;
            for (labels, value) in guard.families.get(name).into_iter().flatten() {
                let _ = writeln!(out, "{name}{{{labels}}} {value}");
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(reason: &str, fallback_attempts: u32, status: u16) -> SwitchEvent {
        SwitchEvent {
            request: 0,
            mode: crate::ProxyMode::Stateless,
            provider_primary: "p".into(),
            provider_fallback: None,
            model_requested: "m".into(),
            model_actual: None,
            reason: reason.parse().unwrap(),
            latency_primary_ms: 0.0,
            latency_fallback_ms: None,
            fallback_attempts,
            primary_attempts: 1,
            continuation: None,
            stream: false,
            status,
            cut: false,
            retry_after_clamped: false,
        }
    }

    #[test]
    fn a_deadline_cut_is_counted_as_a_cut_not_a_failover() {
        let m = Metrics::default();
        let mut cut = event("deadline_cut", 0, 200);
        cut.stream = true;
        cut.cut = true;
        m.observe(&cut);
        let text = m.render();
        assert!(text.contains(
            "continuity_proxy_streams_cut_total{mode=\"stateless\",reason=\"deadline_cut\"} 1\n"
        ));
        assert!(
            !text.contains("continuity_proxy_failovers_total{"),
            "{text}"
        );
    }

    #[test]
    fn counts_requests_failovers_and_retries() {
        let m = Metrics::default();
        m.observe(&event("none", 0, 200));
        m.observe(&event("status_503", 1, 200));
        m.observe(&event("status_429", 3, 429));
        let text = m.render();
        assert!(
            text.contains("continuity_proxy_requests_total{mode=\"stateless\",status=\"200\"} 2\n")
        );
        assert!(
            text.contains("continuity_proxy_requests_total{mode=\"stateless\",status=\"429\"} 1\n")
        );
        assert!(text.contains(
            "continuity_proxy_failovers_total{mode=\"stateless\",reason=\"status_503\"} 1\n"
        ));
        assert!(!text.contains("reason=\"none\""));
        assert!(
            text.contains("continuity_proxy_fallback_429_retries_total{mode=\"stateless\"} 2\n")
        );
        assert!(text.contains(
            "continuity_proxy_upstream_attempts_total{mode=\"stateless\",role=\"fallback\"} 4\n"
        ));
        assert!(text.contains("# TYPE continuity_proxy_failovers_total counter\n"));
    }
}
