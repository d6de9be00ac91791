//! `grade` as a user runs it: a systems file in, one directory out, whose
//! page a real headless browser renders with every system and case on it;
//! `--fail-under` for CI with its controls; `report DIR` on a grade and on
//! the committed example report.

use crate::common::{browser, repo, small_dataset};
use std::path::Path;
use std::process::Output;

/// The semantics cases of the quick grades: a delivered answer, a
/// pass-through, a failover and a broken stream.
const CASES: &str = "ok,401,503,stream-cut";

fn grade(systems: &Path, dataset: &Path, out: &Path, cases: &str, extra: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_continuity-bench"))
        .args(["grade", "--quiet", "--systems"])
        .arg(systems)
        .arg("--dataset")
        .arg(dataset)
        .args(["--cases", cases])
        .arg("--out")
        .arg(out)
        .args(extra)
        .current_dir(repo(""))
        .output()
        .unwrap()
}

fn report(dir: &Path) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_continuity-bench"))
        .arg("report")
        .arg(dir)
        .current_dir(repo(""))
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn grade_writes_a_page_that_a_browser_shows_with_every_system_and_case() {
    let dir = tempfile::tempdir().unwrap();
    let dataset = small_dataset(dir.path(), 6);
    let out = dir.path().join("grade");
    let output = grade(
        &repo("examples/systems/builtin.toml"),
        &dataset,
        &out,
        CASES,
        &["--fail-under", "cpr=95,semantics-fail=0"],
    );
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    for file in [
        "report.html",
        "report.md",
        "summary.json",
        "paper/events.csv",
        "degraded/summary.json",
        "semantics/semantics.json",
    ] {
        assert!(out.join(file).is_file(), "{file} missing");
    }
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let schema = cb_testkit::Schema::new(include_str!("../../schema/grade.schema.json"));
    assert_eq!(schema.errors(&summary), Vec::<String>::new());
    assert_eq!(summary["systems"][1]["continuity"][0]["cpr"]["rate"], 1.0);
    // What was not measured is said, not left blank: no failover event
    // under `degraded`, no stream for `ttft`.
    let unmeasured = summary["systems"][1]["unmeasured"].to_string();
    assert!(unmeasured.contains("CPR under `degraded`"), "{unmeasured}");
    assert!(
        unmeasured.contains("contract `ttft` under `degraded`: not applied"),
        "{unmeasured}"
    );

    // A grade directory is never overwritten.
    let again = grade(
        &repo("examples/systems/builtin.toml"),
        &dataset,
        &out,
        CASES,
        &[],
    );
    assert_eq!(again.status.code(), Some(2), "{}", text(&again.stderr));

    // `report DIR` renders the same page again from summary.json.
    let page = std::fs::read(out.join("report.html")).unwrap();
    let rerendered = report(&out);
    assert_eq!(
        rerendered.status.code(),
        Some(0),
        "{}",
        text(&rerendered.stderr)
    );
    assert_eq!(std::fs::read(out.join("report.html")).unwrap(), page);

    let Some(chromium) = browser::chromium() else {
        return;
    };
    let html = out.join("report.html");
    let dom = browser::dump_dom(&chromium, &html);
    for system in ["stateless", "history"] {
        assert!(
            dom.contains(&format!("id=\"sys--{system}\"")),
            "{system} not in the DOM"
        );
        for case in CASES.split(',') {
            let id = format!("ev--{system}--{case}");
            assert!(dom.contains(&format!("id=\"{id}\"")), "{id} not in the DOM");
            assert!(
                dom.contains(&format!("href=\"#{id}\"")),
                "no scorecard link to {id}"
            );
        }
    }
    let png = dir.path().join("grade.png");
    browser::screenshot(&chromium, &html, &png, 1280, 1600);
    let inked = browser::inked_share(&png);
    assert!(inked > 0.02, "the screenshot is blank ({:.4} inked)", inked);
    // The negative control of that check: a blank page reads as blank.
    let blank = dir.path().join("blank.html");
    std::fs::write(&blank, "<!DOCTYPE html><html><body></body></html>").unwrap();
    let blank_png = dir.path().join("blank.png");
    browser::screenshot(&chromium, &blank, &blank_png, 1280, 1600);
    assert!(
        browser::inked_share(&blank_png) < 0.001,
        "a blank page counted as inked"
    );
    // The scorecard's pass cells (#d9f2d9) and the scorecard bars (#4caf50)
    // are on screen.
    assert!(
        browser::pixels_near(&png, [0xd9, 0xf2, 0xd9]) > 1000,
        "no pass cell"
    );
    assert!(
        browser::pixels_near(&png, [0x4c, 0xaf, 0x50]) > 1000,
        "no scorecard bar"
    );
}

#[test]
fn fail_under_holds_every_system_but_the_controls() {
    let dir = tempfile::tempdir().unwrap();
    let dataset = small_dataset(dir.path(), 4);
    // The same reference systems, with `stateless` not marked a control:
    // its CPR (0 % by construction) now counts, and the gate fails.
    let builtin = std::fs::read_to_string(repo("examples/systems/builtin.toml")).unwrap();
    let uncontrolled = dir.path().join("uncontrolled.toml");
    std::fs::write(&uncontrolled, builtin.replace("control = true", "")).unwrap();
    let output = grade(
        &uncontrolled,
        &dataset,
        &dir.path().join("a"),
        "ok",
        &["--fail-under", "cpr=95"],
    );
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("stateless: cpr>=95 not met"), "{stderr}");
    assert!(!stderr.contains("history: cpr>=95 not met"), "{stderr}");
    let md = std::fs::read_to_string(dir.path().join("a/report.md")).unwrap();
    assert!(md.contains("**NOT met**"), "{md}");

    let bad = grade(
        &repo("examples/systems/builtin.toml"),
        &dataset,
        &dir.path().join("b"),
        "ok",
        &["--fail-under", "speed=3"],
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad.stderr).contains("cpr=95"),
        "{}",
        text(&bad.stderr)
    );
    assert!(
        !dir.path().join("b").exists(),
        "nothing is created for a refused flag"
    );
}

#[test]
fn the_committed_example_report_re_renders_and_the_readme_shows_its_columns() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("example");
    std::fs::create_dir(&copy).unwrap();
    for entry in std::fs::read_dir(repo("reports/example")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), copy.join(entry.file_name())).unwrap();
    }
    let output = report(&copy);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let header = stdout
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>();
    let readme = std::fs::read_to_string(repo("README.md")).unwrap();
    let sample = readme
        .split("## What a run prints")
        .nth(1)
        .and_then(|s| s.split("```text\n").nth(1))
        .unwrap();
    let sample_header = sample
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>();
    assert_eq!(
        sample_header, header,
        "the README's sample table has other columns than a fresh run's"
    );
}
