//! Reading a report directory back, for `report DIR`: the resolved
//! configuration, the recorded rows, and what a re-rendered summary needs
//! besides them.

use super::csv_files::{read_attempts, read_events, read_turns};
use super::json::CONFIG_FILE;
use crate::config::{RequestsInFlight, ResolvedConfig};
use crate::record::EventRecord;
use crate::summary::{InFlight, SummaryContext};
use cb_base::record::{AttemptRecord, TurnRecord};
use cb_driver::Shard;
use cb_report::ReportError;
use std::path::Path;

/// What a report directory holds besides the summary: the resolved
/// configuration and every turn, event and attempt row.
pub type ReportRows = (
    ResolvedConfig,
    Vec<TurnRecord>,
    Vec<EventRecord>,
    Vec<AttemptRecord>,
);

/// Reads config.json and the CSV files of a report directory.
///
/// # Errors
/// [`ReportError`] naming the file (and the row and column for a bad CSV
/// row) and what to do about it.
pub fn read_report(dir: &Path) -> Result<ReportRows, ReportError> {
    let config = read_config(dir)?;
    let turns = read_turns(dir)?;
    let events = read_events(dir)?;
    let attempts = read_attempts(dir)?;
    Ok((config, turns, events, attempts))
}

/// Reads config.json of a report directory.
///
/// # Errors
/// [`ReportError::Read`] when it is missing, [`ReportError::Json`] when it
/// is not a resolved configuration.
pub fn read_config(dir: &Path) -> Result<ResolvedConfig, ReportError> {
    cb_report::json::read(&dir.join(CONFIG_FILE))
}

/// What `summarize` needs besides the rows, from a resolved configuration.
pub fn summary_context(config: &ResolvedConfig, notes: Vec<String>) -> SummaryContext {
    SummaryContext {
        seed: config.seed,
        runs: config.runs,
        conversations: config.conversations,
        dataset: config.dataset.clone(),
        fault_profile: config.fault_profile.clone(),
        systems: config.systems.clone(),
        bootstrap_resamples: config.bootstrap_resamples,
        notes,
        interrupted: config.interrupted,
        interrupted_by: config.interrupted_by,
        shard: config.shard,
        merged_shards: (!config.merged_from.is_empty()).then_some(config.merged_from.len() as u32),
        requests_in_flight: in_flight(config),
    }
}

/// Requests in flight in each process that replayed: the run's own, or
/// each merged shard's.
fn in_flight(config: &ResolvedConfig) -> Vec<InFlight> {
    let jobs = |shard: Option<Shard>| {
        config.systems.len() * shard.unwrap_or_default().len(config.conversations as usize)
    };
    let one = |shard: Option<Shard>, concurrency: usize, r: &RequestsInFlight| InFlight {
        shard,
        concurrency,
        jobs: jobs(shard),
        cap: r.cap,
        bound: r.bound,
        peak: r.peak,
    };
    if config.merged_from.is_empty() {
        vec![one(
            config.shard,
            config.concurrency,
            &config.requests_in_flight,
        )]
    } else {
        config
            .merged_from
            .iter()
            .map(|m| one(Some(m.shard), m.concurrency, &m.requests_in_flight))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::report_data;
    use super::super::write_report;
    use super::*;

    #[test]
    fn write_then_read_gives_equal_records() {
        let dir = tempfile::tempdir().unwrap();
        let data = report_data();
        write_report(dir.path(), &data).unwrap();
        let (config, turns, events, attempts) = read_report(dir.path()).unwrap();
        assert_eq!(config, data.config);
        assert_eq!(turns, data.turns);
        assert_eq!(events, data.events);
        assert_eq!(attempts, data.attempts);
        // Awkward floats survive exactly.
        assert!(turns.iter().any(|t| t.latency_ms.fract() != 0.0));
    }

    #[test]
    fn missing_directory_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_report(&dir.path().join("nope")).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("nope/config.json"), "{message}");
        assert!(message.contains("report directory written by `continuity-bench run`"));
    }

    #[test]
    fn missing_csv_is_named() {
        let dir = tempfile::tempdir().unwrap();
        write_report(dir.path(), &report_data()).unwrap();
        std::fs::remove_file(dir.path().join("attempts.csv")).unwrap();
        let err = read_report(dir.path()).unwrap_err();
        assert!(err.to_string().contains("attempts.csv"), "{err}");
    }

    #[test]
    fn broken_config_is_named() {
        let dir = tempfile::tempdir().unwrap();
        write_report(dir.path(), &report_data()).unwrap();
        std::fs::write(dir.path().join("config.json"), b"{\"seed\": 1}").unwrap();
        let err = read_report(dir.path()).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("config.json: invalid JSON"), "{message}");
    }

    #[test]
    fn context_carries_the_config() {
        let data = report_data();
        let ctx = summary_context(&data.config, vec!["n".into()]);
        assert_eq!(ctx.seed, data.config.seed);
        assert_eq!(ctx.systems, data.config.systems);
        assert_eq!(ctx.bootstrap_resamples, data.config.bootstrap_resamples);
        assert_eq!(ctx.dataset, data.config.dataset);
        assert_eq!(ctx.notes, vec!["n".to_string()]);
    }
}
