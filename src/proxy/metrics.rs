//! Counters of a reference proxy, served by `GET /metrics` in the Prometheus
//! text format. They are the only state shared between requests besides the
//! event sink; no conversation content is ever kept.

use super::events::{SwitchEvent, REASON_INVALID, REASON_NONE};
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
const EVENT_WRITE_ERRORS: Family = Family {
    name: "continuity_proxy_event_write_errors_total",
    help: "Switch events that could not be appended to the events file.",
};

/// The counters of one proxy. Keys are rendered label sets, so the output
/// order is stable.
#[derive(Debug, Default)]
pub struct Metrics {
    counters: Mutex<BTreeMap<(&'static str, String), u64>>,
}

impl Metrics {
    fn add(&self, family: &Family, labels: String, n: u64) {
        let mut counters = self.counters.lock().unwrap_or_else(|p| p.into_inner());
        *counters.entry((family.name, labels)).or_insert(0) += n;
    }

    /// Counts one finished request from its switch event.
    pub fn observe(&self, event: &SwitchEvent) {
        let mode = &event.mode;
        self.add(
            &REQUESTS,
            format!("mode=\"{mode}\",status=\"{}\"", event.status),
            1,
        );
        if event.reason == REASON_INVALID {
            return;
        }
        self.add(&ATTEMPTS, format!("mode=\"{mode}\",role=\"primary\""), 1);
        if event.reason != REASON_NONE {
            self.add(
                &FAILOVERS,
                format!("mode=\"{mode}\",reason=\"{}\"", event.reason),
                1,
            );
        }
        if event.fallback_attempts > 0 {
            let n = u64::from(event.fallback_attempts);
            self.add(&ATTEMPTS, format!("mode=\"{mode}\",role=\"fallback\""), n);
            self.add(&RETRIES, format!("mode=\"{mode}\""), n - 1);
        }
    }

    /// Counts an event that could not be written to the events file.
    pub fn event_write_error(&self, mode: &str) {
        self.add(&EVENT_WRITE_ERRORS, format!("mode=\"{mode}\""), 1);
    }

    /// The value of one counter, 0 when never incremented. `labels` as
    /// rendered, e.g. `mode="history",reason="timeout"`.
    pub fn get(&self, name: &str, labels: &str) -> u64 {
        let counters = self.counters.lock().unwrap_or_else(|p| p.into_inner());
        counters
            .iter()
            .find(|((n, l), _)| *n == name && l == labels)
            .map_or(0, |(_, v)| *v)
    }

    /// Every counter in the Prometheus text exposition format (0.0.4).
    pub fn render(&self) -> String {
        let counters = self.counters.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = String::new();
        for family in [
            &REQUESTS,
            &FAILOVERS,
            &RETRIES,
            &ATTEMPTS,
            &EVENT_WRITE_ERRORS,
        ] {
            let _ = writeln!(out, "# HELP {} {}", family.name, family.help);
            let _ = writeln!(out, "# TYPE {} counter", family.name);
            for ((name, labels), value) in counters.iter() {
                if *name == family.name {
                    let _ = writeln!(out, "{name}{{{labels}}} {value}");
                }
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
            mode: "stateless".into(),
            provider_primary: "p".into(),
            provider_fallback: None,
            model_requested: "m".into(),
            model_actual: None,
            reason: reason.into(),
            latency_primary_ms: 0.0,
            latency_fallback_ms: None,
            fallback_attempts,
            stream: false,
            status,
        }
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
