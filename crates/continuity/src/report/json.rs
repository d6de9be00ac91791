//! config.json, summary.json and fallback_delivery.json: the resolved configuration, what reached each fallback and the
//! [`Summary`](crate::summary::Summary) contract, as pretty JSON.
//!
//! summary.json is described by `schema/summary.schema.json`; a test checks
//! the serialised fixture against it.

use super::ReportData;
use cb_report::json::pretty;
use cb_report::{Exporter, ReportError};

/// File name of the resolved configuration.
pub const CONFIG_FILE: &str = "config.json";
/// File name of the summary.
pub const SUMMARY_FILE: &str = "summary.json";

/// Writes config.json.
#[derive(Debug, Clone, Copy)]
pub struct ConfigJson;

/// Writes summary.json.
#[derive(Debug, Clone, Copy)]
pub struct SummaryJson;

/// The file holding what reached each system's fallback: measured by the
/// upstreams during the run, so `report DIR` cannot rebuild it from the
/// CSV files and reads it back from here.
pub const DELIVERY_FILE: &str = "fallback_delivery.json";

/// Writes fallback_delivery.json: each system's
/// [`crate::summary::delivery::Delivery`], by name.
#[derive(Debug, Clone, Copy)]
pub struct DeliveryJson;

impl Exporter<ReportData> for DeliveryJson {
    fn file_name(&self) -> &'static str {
        DELIVERY_FILE
    }
    fn render(&self, data: &ReportData) -> Result<Vec<u8>, ReportError> {
        let by_system: std::collections::BTreeMap<&str, _> = data
            .summary
            .systems
            .iter()
            .filter_map(|s| s.fallback_delivery.as_ref().map(|d| (s.name.as_str(), d)))
            .collect();
        pretty(DELIVERY_FILE, &by_system)
    }
}

/// Puts back what reached each fallback, from the fallback_delivery.json of
/// the report in `dir` (a report written before the file existed has none:
/// the summary then has no delivery figures).
///
/// # Errors
/// [`ReportError::Json`] when the file is there but unreadable.
pub fn restore_delivery(
    dir: &std::path::Path,
    systems: &mut [crate::summary::SystemSummary],
) -> Result<(), ReportError> {
    let path = dir.join(DELIVERY_FILE);
    if !path.is_file() {
        return Ok(());
    }
    let mut by_system: std::collections::BTreeMap<String, crate::summary::delivery::Delivery> =
        cb_report::json::read(&path)?;
    for s in systems {
        s.fallback_delivery = by_system.remove(&s.name);
    }
    Ok(())
}

impl Exporter<ReportData> for ConfigJson {
    fn file_name(&self) -> &'static str {
        CONFIG_FILE
    }
    fn render(&self, data: &ReportData) -> Result<Vec<u8>, ReportError> {
        pretty(CONFIG_FILE, &data.config)
    }
}

impl Exporter<ReportData> for SummaryJson {
    fn file_name(&self) -> &'static str {
        SUMMARY_FILE
    }
    fn render(&self, data: &ReportData) -> Result<Vec<u8>, ReportError> {
        pretty(SUMMARY_FILE, &data.summary)
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::report_data;
    use super::*;
    use crate::summary::Summary;
    use cb_testkit::Schema;

    fn schema() -> Schema {
        Schema::new(include_str!("../../../../schema/summary.schema.json"))
    }

    fn fixture_json() -> serde_json::Value {
        serde_json::from_slice(&SummaryJson.render(&report_data()).unwrap()).unwrap()
    }

    fn errors(instance: &serde_json::Value) -> Vec<String> {
        schema().errors(instance)
    }

    #[test]
    fn schema_is_valid_draft_2020_12() {
        // Schema::new checks it against the draft 2020-12 meta-schema.
        schema();
    }

    #[test]
    fn fixture_summary_matches_the_schema() {
        assert_eq!(errors(&fixture_json()), Vec::<String>::new());
    }

    #[test]
    fn figures_past_the_fault_match_the_schema() {
        use crate::record::{fixture::event, EventRecord};
        let e = EventRecord {
            turn: 3,
            outage_end: 5,
            probes: "3:preserved 5:lost 6:preserved 10:preserved"
                .parse()
                .unwrap(),
            served_after: "6:primary 7:fallback".parse().unwrap(),
            tools: cb_base::record::ToolCalls::Refused,
            tools_reason: "turn 4: the fallback refused the request's tool calls (HTTP 400)".into(),
            ..event(1, "history", "c001", 10)
        };
        let past = crate::summary::past::past_fault(&[&e], true, 42, 100);
        assert!(past.is_some());
        let mut data = report_data();
        data.summary.systems[0].past_fault = past;
        let json: serde_json::Value =
            serde_json::from_slice(&SummaryJson.render(&data).unwrap()).unwrap();
        assert_eq!(errors(&json), Vec::<String>::new());
        assert!(
            json["systems"][0]["past_fault"]["tool_integrity"]["reasons"][0]
                .as_str()
                .unwrap()
                .contains("refused")
        );
    }

    #[test]
    fn summary_without_clo_matches_the_schema() {
        let mut data = report_data();
        data.summary.clo = None;
        let json: serde_json::Value =
            serde_json::from_slice(&SummaryJson.render(&data).unwrap()).unwrap();
        assert_eq!(errors(&json), Vec::<String>::new());
    }

    #[test]
    fn schema_rejects_a_missing_field() {
        let mut json = fixture_json();
        json["systems"][0]
            .as_object_mut()
            .unwrap()
            .remove("cpr_clustered");
        let found = errors(&json);
        assert!(
            found.iter().any(|e| e.contains("cpr_clustered")),
            "{found:?}"
        );
        let mut json = fixture_json();
        json.as_object_mut().unwrap().remove("seed");
        assert!(!errors(&json).is_empty());
    }

    #[test]
    fn schema_rejects_an_unknown_field_and_a_wrong_type() {
        let mut json = fixture_json();
        json["systems"][1]["cpr"]["extra"] = serde_json::json!(1);
        assert!(!errors(&json).is_empty());
        let mut json = fixture_json();
        json["systems"][0]["events"] = serde_json::json!("750");
        assert!(!errors(&json).is_empty());
    }

    /// Equal JSON values, numbers within 1e-12 (serde_json's parser may be
    /// one ulp off the shortest representation it writes).
    fn assert_close(a: &serde_json::Value, b: &serde_json::Value, at: &str) {
        use serde_json::Value;
        match (a, b) {
            (Value::Number(x), Value::Number(y)) => {
                let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
                assert!(
                    (x - y).abs() <= 1e-12 * x.abs().max(1.0),
                    "{at}: {x} != {y}"
                );
            }
            (Value::Array(x), Value::Array(y)) => {
                assert_eq!(x.len(), y.len(), "{at}");
                for (i, (x, y)) in x.iter().zip(y).enumerate() {
                    assert_close(x, y, &format!("{at}/{i}"));
                }
            }
            (Value::Object(x), Value::Object(y)) => {
                assert_eq!(
                    x.keys().collect::<Vec<_>>(),
                    y.keys().collect::<Vec<_>>(),
                    "{at}"
                );
                for (k, x) in x {
                    assert_close(x, &y[k], &format!("{at}/{k}"));
                }
            }
            _ => assert_eq!(a, b, "{at}"),
        }
    }

    #[test]
    fn summary_json_round_trips() {
        let data = report_data();
        let bytes = SummaryJson.render(&data).unwrap();
        let back: Summary = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(back.systems[1].cpr.successes, 744);
        assert_close(
            &serde_json::to_value(&back).unwrap(),
            &serde_json::to_value(&data.summary).unwrap(),
            "",
        );
    }
}
