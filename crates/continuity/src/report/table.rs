//! The summary table printed on stdout at the end of `run` and `report DIR`:
//! one line per system (through [`cb_report::Table`]), the warnings, then
//! one line for CLO. By default it keeps the columns that fit a 100-column
//! terminal ([`Columns::Fit`]); `--wide` prints every one ([`Columns::All`]),
//! as the report files always do.

use crate::summary::Summary;
use cb_report::format::{
    confidence, interval, mean, ms_number, rate_percent, rate_with_counts, signed_ms, NOT_MEASURED,
};
use cb_report::Table;
use std::fmt::Write as _;

/// Column headers; `{level}` is replaced by the confidence level.
const HEADERS: [&str; 12] = [
    "system",
    "failover/planned",
    "CPR",
    "{level} Wilson",
    "clustered {level}",
    "clean CPR",
    "availability",
    "survival",
    "bleed",
    "attempts/event",
    "storm",
    "event-turn p50/p95 ms",
];

/// Which columns the terminal table prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Columns {
    /// The columns that fit 100 terminal columns (with system names of up
    /// to 9 characters): system, events, CPR, its Wilson interval,
    /// availability, bleed, attempts per event, event-turn p50/p95; a
    /// system whose retries storm gets a `STORM` line under the table.
    #[default]
    Fit,
    /// Every column (`--wide`).
    All,
}

/// The indexes into [`HEADERS`] that [`Columns::Fit`] keeps, with the
/// shorter header each is printed under.
const FIT: [(usize, &str); 8] = [
    (0, "system"),
    (1, "events"),
    (2, "CPR"),
    (3, "{level} Wilson"),
    (6, "avail."),
    (8, "bleed"),
    (9, "attempts"),
    (11, "p50/p95 ms"),
];

/// The table: system | failover/planned events | CPR | Wilson | clustered |
/// clean CPR | availability | survival | bleeding answers | attempts/event | storm |
/// event-turn p50/p95 ms, then the warnings, then a CLO line; an interrupted
/// run says so first.
pub fn render_table(summary: &Summary, columns: Columns) -> String {
    let level = confidence(summary.confidence);
    let headers: Vec<String> = match columns {
        Columns::All => HEADERS
            .iter()
            .map(|h| h.replace("{level}", &level))
            .collect(),
        Columns::Fit => FIT
            .iter()
            .map(|(_, h)| h.replace("{level}", &level))
            .collect(),
    };
    let mut table = Table::new(headers).right_aligned_from(1);
    for x in &summary.systems {
        let latency = &x.event_latency_ms;
        let row = [
            x.name.clone(),
            format!("{}/{}", x.stages.failover, x.stages.total()),
            rate_with_counts(&x.cpr),
            interval(&x.cpr.wilson),
            interval(&x.cpr_clustered),
            rate_percent(&x.clean_cpr),
            rate_percent(&x.availability),
            rate_percent(&x.survival),
            x.bleed.answers_bleeding.to_string(),
            if x.events == 0 {
                NOT_MEASURED.to_string()
            } else {
                mean(x.attempts.primary_mean + x.attempts.fallback_mean)
            },
            if x.attempts.storm { "STORM" } else { "no" }.to_string(),
            if latency.n == 0 {
                NOT_MEASURED.to_string()
            } else {
                format!(
                    "{} / {}",
                    ms_number(latency.median, false),
                    ms_number(latency.p95, false)
                )
            },
        ];
        match columns {
            Columns::All => table.push(row),
            Columns::Fit => table.push(FIT.iter().map(|(i, _)| row[*i].clone())),
        }
    }
    let mut out = String::new();
    if summary.interrupted {
        let _ = writeln!(
            out,
            "INTERRUPTED ({}): the figures cover only the conversations that finished.",
            cb_base::stop::Stop::name_of(summary.interrupted_by)
        );
    }
    out.push_str(&table.render());
    if columns == Columns::Fit {
        for x in summary.systems.iter().filter(|x| x.attempts.storm) {
            let _ = writeln!(
                out,
                "STORM {}: its attempts per failover event form a retry storm (--wide shows the column)",
                x.name
            );
        }
    }
    out.push_str(&in_flight_lines(summary));
    for warning in summary.systems.iter().filter_map(|x| x.warning.as_ref()) {
        out.push_str(&format!("WARNING {warning}\n"));
    }
    for x in &summary.systems {
        let broken: Vec<String> = x
            .contracts
            .iter()
            .filter(|c| c.broken.successes > 0)
            .map(|c| format!("{} {}", c.contract.as_str(), rate_with_counts(&c.broken)))
            .collect();
        if !broken.is_empty() {
            out.push_str(&format!(
                "{} delivered answers breaking a contract: {}\n",
                x.name,
                broken.join(", ")
            ));
        }
    }
    out.push_str(&past_lines(summary));
    out.push_str(&clo_line(summary));
    out
}

/// One line per system that measured something past the fault: survival,
/// return to primary and tool-call integrity, with counts (`n/a` for an
/// empty denominator).
fn past_lines(summary: &Summary) -> String {
    let mut out = String::new();
    for x in &summary.systems {
        if let Some(p) = &x.past_fault {
            let _ = writeln!(out, "PAST THE FAULT {}: {}", x.name, p.line());
        }
    }
    out
}

/// One line per process whose peak of requests in flight stayed below its
/// `--concurrency`, with why: a cap, fewer conversations than asked, or
/// requests that never all overlapped. Nothing when the peak reached it.
fn in_flight_lines(summary: &Summary) -> String {
    let mut out = String::new();
    for f in &summary.requests_in_flight {
        let Some(peak) = f.peak.filter(|p| *p < f.concurrency) else {
            continue;
        };
        let who = f
            .shard
            .map_or_else(String::new, |s| format!(" (shard {s})"));
        let why = match (f.cap, f.bound) {
            (Some(cap), Some(bound)) => format!("capped at {cap} by {}", bound.describe()),
            _ if f.jobs < f.concurrency => {
                format!("only {} conversations to replay", f.jobs)
            }
            _ => "answers came back before the requests all overlapped".to_string(),
        };
        out.push_str(&format!(
            "BELOW --concurrency{who}: at most {peak} requests were in flight at once, not {}: {why}\n",
            f.concurrency
        ));
    }
    out
}

fn clo_line(summary: &Summary) -> String {
    match &summary.clo {
        Some(clo) if clo.delta_ms.n > 0 => format!(
            "CLO ({} - {}, n = {}): median {}, mean {}, P95 {}, P99 {}\n",
            clo.treatment,
            clo.baseline,
            clo.delta_ms.n,
            signed_ms(clo.delta_ms.median),
            signed_ms(clo.delta_ms.mean),
            signed_ms(clo.delta_ms.p95),
            signed_ms(clo.delta_ms.p99)
        ),
        Some(clo) => format!(
            "CLO ({} - {}): n/a, no (run, conversation) was a failover event answered by both\n",
            clo.treatment, clo.baseline
        ),
        None => "CLO: not computed (needs both `stateless` and `history`)\n".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::summary;
    use super::*;

    #[test]
    fn table_has_the_right_numbers_in_aligned_columns() {
        let table = render_table(&summary(), Columns::All);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 6, "{table}");
        assert!(
            lines[0].starts_with("system     failover/planned"),
            "{table}"
        );
        assert!(lines[0].contains("95 % Wilson"), "{table}");
        assert!(lines[0].contains("clustered 95 %"), "{table}");
        let history = lines[3];
        for expected in [
            "history",
            "750/750",
            "99.20 % (744/750)",
            "[98.27 %, 99.63 %]",
            "[98.13 %, 99.73 %]",
            "99.60 %",
            "2.004",
            "1,480 / 12,894",
        ] {
            assert!(history.contains(expected), "{expected} not in {history}");
        }
        let stateless = lines[2];
        assert!(stateless.starts_with("stateless"), "{table}");
        assert!(stateless.contains("0.00 % (0/750)"), "{stateless}");
        assert!(stateless.contains("[0.00 %, 0.51 %]"), "{stateless}");
        // Fixed width: every system line ends at the same column as the header.
        assert_eq!(lines[2].chars().count(), lines[0].chars().count());
        assert_eq!(lines[3].chars().count(), lines[0].chars().count());
        assert_eq!(
            lines[4],
            "history delivered answers breaking a contract: junk_prefix 0.01 % (1/6737)"
        );
        assert_eq!(
            lines[5],
            "CLO (history - stateless, n = 747): median -450 ms, mean +59.2 ms, P95 +13,614 ms, P99 +14,890 ms"
        );
    }

    #[test]
    fn interruption_and_warnings_are_printed_around_the_table() {
        let mut s = summary();
        s.interrupted = true;
        s.systems[1].warning =
            Some("history: only 3 of 10 planned events reached the fault".into());
        s.systems[1].cpr = cb_stats::rate(0, 0);
        s.systems[1].cpr_clustered = None;
        let table = render_table(&s, Columns::All);
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].starts_with("INTERRUPTED (Ctrl-C)"), "{table}");
        assert!(lines[4].contains("n/a (0/0)"), "{table}");
        assert_eq!(
            lines[5],
            "WARNING history: only 3 of 10 planned events reached the fault"
        );
    }

    #[test]
    fn a_peak_below_concurrency_is_said_in_the_table_with_its_cause() {
        use crate::summary::InFlight;
        use cb_driver::{Bound, Shard};
        // The fixture's peak reached --concurrency: no line.
        assert!(!render_table(&summary(), Columns::All).contains("BELOW"));
        let mut s = summary();
        let capped = InFlight {
            shard: None,
            concurrency: 10_000,
            jobs: 20_000,
            cap: Some(409),
            bound: Some(Bound::Memory),
            peak: Some(409),
        };
        s.requests_in_flight = vec![capped];
        let table = render_table(&s, Columns::All);
        let line = table.lines().find(|l| l.starts_with("BELOW")).unwrap();
        assert_eq!(
            line,
            "BELOW --concurrency: at most 409 requests were in flight at once, not 10000: capped at 409 by the memory budget for requests in flight"
        );
        // It comes right under the system lines.
        assert_eq!(table.lines().nth(4), Some(line));
        let few = InFlight {
            shard: Some(Shard::new(1, 4).unwrap()),
            concurrency: 100,
            jobs: 76,
            cap: None,
            bound: None,
            peak: Some(76),
        };
        let unmet = InFlight {
            jobs: 400,
            peak: Some(97),
            ..few
        };
        s.requests_in_flight = vec![few, unmet, InFlight { peak: None, ..few }];
        let table = render_table(&s, Columns::All);
        let lines: Vec<&str> = table.lines().filter(|l| l.starts_with("BELOW")).collect();
        assert_eq!(lines.len(), 2, "{table}");
        assert!(lines[0].starts_with("BELOW --concurrency (shard 1/4): at most 76"));
        assert!(lines[0].ends_with("only 76 conversations to replay"));
        assert!(lines[1].ends_with("answers came back before the requests all overlapped"));
    }

    #[test]
    fn the_default_table_fits_100_columns_and_wide_keeps_every_column() {
        let fit = render_table(&summary(), Columns::Fit);
        for line in fit.lines() {
            assert!(
                line.chars().count() <= 100,
                "{} chars: {line}",
                line.chars().count()
            );
        }
        let header = fit.lines().next().unwrap_or_default();
        assert!(header.starts_with("system"), "{fit}");
        assert!(
            header.contains("95 % Wilson") && !header.contains("clustered"),
            "{fit}"
        );
        assert!(!fit.contains("STORM"), "{fit}");
        // The wide table is wider than 100 columns: the cut is real.
        let all = render_table(&summary(), Columns::All);
        assert!(all.lines().any(|l| l.chars().count() > 100), "{all}");
        assert!(
            all.contains("clustered 95 %") && all.contains("survival"),
            "{all}"
        );
        // A storm, which only --wide has a column for, gets its own line.
        let mut s = summary();
        s.systems[1].attempts.storm = true;
        let fit = render_table(&s, Columns::Fit);
        let storm: Vec<&str> = fit.lines().filter(|l| l.starts_with("STORM")).collect();
        assert_eq!(storm.len(), 1, "{fit}");
        assert!(storm[0].starts_with("STORM history:"), "{fit}");
        assert!(storm[0].chars().count() <= 100, "{}", storm[0]);
        assert!(!render_table(&s, Columns::All).contains("STORM history:"));
    }

    #[test]
    fn missing_clo_is_said() {
        let mut s = summary();
        s.clo = None;
        assert!(render_table(&s, Columns::All)
            .ends_with("CLO: not computed (needs both `stateless` and `history`)\n"));
    }
}
