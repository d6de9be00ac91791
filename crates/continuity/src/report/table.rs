//! The summary table printed on stdout at the end of `run` and `report DIR`:
//! one line per system (through [`cb_report::Table`]), the warnings, then
//! one line for CLO.

use crate::summary::Summary;
use cb_report::format::{
    confidence, interval, mean, ms_number, rate_percent, rate_with_counts, signed_ms, NOT_MEASURED,
};
use cb_report::Table;

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

/// The table: system | failover/planned events | CPR | Wilson | clustered |
/// clean CPR | availability | survival | bleeding answers | attempts/event | storm |
/// event-turn p50/p95 ms, then the warnings, then a CLO line; an interrupted
/// run says so first.
pub fn render_table(summary: &Summary) -> String {
    let level = confidence(summary.confidence);
    let mut table =
        Table::new(HEADERS.iter().map(|h| h.replace("{level}", &level))).right_aligned_from(1);
    for x in &summary.systems {
        let latency = &x.event_latency_ms;
        table.push([
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
        ]);
    }
    let mut out = String::new();
    if summary.interrupted {
        out.push_str(
            "INTERRUPTED (Ctrl-C): the figures cover only the conversations that finished.\n",
        );
    }
    out.push_str(&table.render());
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
    out.push_str(&clo_line(summary));
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
        let table = render_table(&summary());
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
        let table = render_table(&s);
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].starts_with("INTERRUPTED (Ctrl-C)"), "{table}");
        assert!(lines[4].contains("n/a (0/0)"), "{table}");
        assert_eq!(
            lines[5],
            "WARNING history: only 3 of 10 planned events reached the fault"
        );
    }

    #[test]
    fn missing_clo_is_said() {
        let mut s = summary();
        s.clo = None;
        assert!(render_table(&s)
            .ends_with("CLO: not computed (needs both `stateless` and `history`)\n"));
    }
}
