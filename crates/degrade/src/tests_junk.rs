//! The positive and negative controls of `junk_prefix` by shape: every junk
//! style in every shape a host produces it (spaced, glued, after a
//! byte-order mark, inside the opening bold), on the simulated model's
//! replies and a reply in each language, trips `junk_prefix` and nothing
//! else; the same replies in the same shapes without the junk pass. The
//! generator's junk lists are its own (`junk.rs`), so a shape the detector
//! was not built for shows here as a failure.

use super::tests::{multilingual, simulated};
use super::*;
use cb_contracts::{violations, ContractInput, ContractName, Contracts, Outcome};
use cb_wire::openai::ChatRequest;

/// The `junk_prefix` outcome and the failed contracts of `text`.
fn check(contracts: &Contracts, request: &ChatRequest, text: &str) -> (Outcome, Vec<ContractName>) {
    let english = request.messages.first().is_some_and(|m| m.role == "system");
    let input = ContractInput {
        request,
        expected_language: english.then_some(Language::En),
        status: 200,
        stream: false,
        text,
        finish_reason: Some("stop"),
        ttft: None,
        ttfb: None,
    };
    let results = contracts.check(&input);
    let junk = results
        .iter()
        .find(|r| r.name == ContractName::JunkPrefix)
        .and_then(|r| r.outcome.clone())
        .expect("junk_prefix applies to text replies");
    (junk, violations(&results))
}

/// The shapes each style has, and why the others do not apply: the list
/// the issue asks a test to show.
#[test]
fn the_shapes_of_each_style_are_listed() {
    let mut table = Vec::new();
    for style in JunkStyle::ALL {
        for shape in JunkShape::ALL {
            table.push(format!(
                "{style:?}/{shape:?}: {}",
                junk_shape_not_applicable(style, shape).unwrap_or("produced")
            ));
        }
    }
    let produced = table.iter().filter(|r| r.ends_with("produced")).count();
    assert_eq!(produced, 16, "{table:#?}");
    for style in JunkStyle::ALL {
        for shape in [JunkShape::Glued, JunkShape::AfterBom] {
            assert!(
                junk_shape_not_applicable(style, shape).is_none(),
                "{style:?}/{shape:?}"
            );
        }
    }
}

#[test]
fn every_style_in_every_shape_trips_junk_prefix_only() {
    let contracts = Contracts::default();
    let cases: Vec<_> = simulated().into_iter().chain(multilingual()).collect();
    let mut missed = Vec::new();
    for (s, style) in JunkStyle::ALL.into_iter().enumerate() {
        for (h, shape) in JunkShape::ALL.into_iter().enumerate() {
            if junk_shape_not_applicable(style, shape).is_some() {
                continue;
            }
            let mut produced = 0;
            for (i, (request, reply)) in cases.iter().enumerate() {
                for draw in 0..3 {
                    let stream = ((s * 10 + h) * 10_000 + i * 10 + draw) as u64;
                    let mut rng = cb_base::seed::rng(11, "junk-shapes", stream);
                    let Some(text) = junk_shaped(style, shape, &reply.text, &mut rng) else {
                        continue;
                    };
                    produced += 1;
                    let (outcome, failed) = check(&contracts, request, &text);
                    // After a byte-order mark the mark alone fails; the junk
                    // after it must be named too.
                    let named = shape != JunkShape::AfterBom
                        || outcome.reason().unwrap_or("").contains(", then:");
                    if failed != vec![ContractName::JunkPrefix] || !named {
                        missed.push(format!(
                            "{style:?}/{shape:?}: {text:?} gave {failed:?} {outcome}"
                        ));
                    }
                }
            }
            assert!(
                produced >= 30,
                "{style:?}/{shape:?}: only {produced} produced"
            );
        }
    }
    assert!(
        missed.is_empty(),
        "{} missed:\n{}",
        missed.len(),
        missed.join("\n")
    );
}

#[test]
fn the_same_shapes_without_junk_pass() {
    let contracts = Contracts::default();
    let cases: Vec<_> = simulated().into_iter().chain(multilingual()).collect();
    let mut in_bold = 0;
    for (request, reply) in &cases {
        let text = reply.text.trim_start();
        let (out, failed) = check(&contracts, request, text);
        assert_eq!(failed, vec![], "{text:?}: {out}");
        // In bold: the first word wrapped as the InMarkdown shape wraps it.
        let word_end = text
            .char_indices()
            .enumerate()
            .find(|(n, (_, c))| c.is_whitespace() || (*n >= 6 && !c.is_ascii()))
            .map_or(text.len(), |(_, (i, _))| i);
        let word = &text[..word_end];
        if !word.contains(['*', '_', '`']) {
            in_bold += 1;
            let bold = format!("**{word}**{}", &text[word_end..]);
            let (out, _) = check(&contracts, request, &bold);
            assert_eq!(out, Outcome::Pass, "{bold:?}");
        }
        // After a byte-order mark: the mark fails, and nothing else is named.
        let bom = format!("\u{FEFF}{text}");
        let (out, _) = check(&contracts, request, &bom);
        let reason = out.reason().unwrap_or("");
        assert!(
            out.is_fail() && !reason.contains(", then:"),
            "{bom:?}: {out}"
        );
    }
    assert!(in_bold >= 30, "{in_bold}");
}
