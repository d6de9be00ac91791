//! The decision log: one JSON line per automatic decision or state change,
//! so a person can see what the canary did (or, in observe mode, would have
//! done), to which route, on which contract and evidence, and when.

use super::clock::Timestamp;
use super::evidence::{ContractName, ProbeKind};
use super::policy::Mode;
use serde::{Deserialize, Serialize};

/// What a record is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordKind {
    /// The route failed some contract in enough consecutive rounds and was
    /// quarantined (observe: would be).
    Quarantine,
    /// Enough consecutive clean rounds lifted a quarantine early.
    EarlyRelease,
    /// A quarantine ran its full length.
    Expiry,
    /// A person lifted a quarantine.
    ManualRelease,
    /// A quarantine was not applied because of the capacity floor; a person
    /// must decide.
    CapacityAlert,
    /// The route went long enough without a quarantine: the next one is the
    /// first step again.
    HistoryReset,
    /// The positive control passed (or could not be read): the probe's passes
    /// are not evidence of health this round. `route` is the control.
    ProbeWeak,
    /// A transport error froze the route this round.
    Frozen,
    /// A reply came from another route; nothing was scored this round.
    PinningNotHonoured,
    /// The mode changed while the route was quarantined: the quarantine is
    /// now enforced, or no longer.
    ModeChange,
    /// No route could be scored this round (every probe got a transport
    /// error, or no route was listed): an alert with the reason. `route`
    /// is `*`.
    NoRouteScored,
}

impl RecordKind {
    /// The words a person reads, with "would" in observe mode for decisions
    /// that are not applied.
    pub fn label(self, mode: Mode) -> &'static str {
        let observe = mode == Mode::Observe;
        match self {
            RecordKind::Quarantine if observe => "would quarantine",
            RecordKind::Quarantine => "quarantine",
            RecordKind::EarlyRelease if observe => "would release (clean rounds)",
            RecordKind::EarlyRelease => "release (clean rounds)",
            RecordKind::Expiry if observe => "would release (quarantine over)",
            RecordKind::Expiry => "release (quarantine over)",
            RecordKind::ManualRelease => "manual release",
            RecordKind::CapacityAlert => "alert: quarantine not applied, capacity floor",
            RecordKind::HistoryReset => "escalation history reset",
            RecordKind::ProbeWeak => "probe weak",
            RecordKind::Frozen => "frozen",
            RecordKind::PinningNotHonoured => "pinning not honoured",
            RecordKind::ModeChange => "mode change",
            RecordKind::NoRouteScored => "alert: no route scored",
        }
    }
}

/// One line of the decision log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogRecord {
    /// When (the injected clock), RFC 3339.
    pub time: Timestamp,
    /// The round number (0 for a manual action before any round).
    pub round: u64,
    /// The route concerned.
    pub route: String,
    /// What happened.
    pub kind: RecordKind,
    /// The words for a person: "would quarantine", "release (clean rounds)".
    pub action: String,
    /// The contract concerned, if one.
    pub contract: Option<ContractName>,
    /// The probe concerned, if one (weak-probe records).
    pub probe: Option<ProbeKind>,
    /// What was seen, in words.
    pub evidence: String,
    /// Observe or enforce.
    pub mode: Mode,
    /// When the quarantine ends, on quarantine records.
    pub until: Option<Timestamp>,
    /// The routes that would stay healthy, on capacity alerts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub healthy_routes: Vec<String>,
}

impl LogRecord {
    /// A record with the optional fields empty.
    pub fn new(
        time: Timestamp,
        round: u64,
        route: &str,
        kind: RecordKind,
        mode: Mode,
        evidence: String,
    ) -> Self {
        LogRecord {
            time,
            round,
            route: route.to_string(),
            kind,
            action: kind.label(mode).to_string(),
            contract: None,
            probe: None,
            evidence,
            mode,
            until: None,
            healthy_routes: Vec::new(),
        }
    }

    /// The record as one JSON line, newline included.
    ///
    /// # Errors
    /// Never in practice (every field serialises); kept as a `Result` so a
    /// caller's `?` does not hide a future field that can fail.
    pub fn to_json_line(&self) -> Result<String, serde_json::Error> {
        let mut line = serde_json::to_string(self)?;
        line.push('\n');
        Ok(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_one_json_line_with_the_named_fields() {
        let mut r = LogRecord::new(
            Timestamp::from_unix(0).unwrap(),
            3,
            "deepinfra/fp8",
            RecordKind::Quarantine,
            Mode::Observe,
            "junk before text".into(),
        );
        r.contract = Some(ContractName::JunkPrefix);
        let line = r.to_json_line().unwrap();
        assert!(line.ends_with('\n'));
        assert_eq!(line.matches('\n').count(), 1);
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["time"], "1970-01-01T00:00:00Z");
        assert_eq!(v["route"], "deepinfra/fp8");
        assert_eq!(v["kind"], "quarantine");
        assert_eq!(v["action"], "would quarantine");
        assert_eq!(v["contract"], "junk_prefix");
        assert_eq!(v["evidence"], "junk before text");
        assert_eq!(v["mode"], "observe");
        let back: LogRecord = serde_json::from_str(&line).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn enforce_mode_drops_the_would() {
        assert_eq!(RecordKind::Quarantine.label(Mode::Enforce), "quarantine");
        assert_eq!(
            RecordKind::EarlyRelease.label(Mode::Observe),
            "would release (clean rounds)"
        );
    }
}
