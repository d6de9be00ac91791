//! The layers of the workspace, checked so that nothing rests on review
//! alone: the compiler refuses a dependency cycle between crates, but not a
//! core crate that imports a suite, one suite that imports another, or two
//! modules of a crate that import each other.
//!
//! The crates and their dependencies come from `cargo metadata` (every
//! dependency kind, platform-specific ones included, a renamed one by its
//! package), and:
//!
//! - the suite crates are [`SUITES`]; no core crate (every other `cb-*`
//!   crate) depends on a suite, in `[dependencies]`, `[dev-dependencies]`
//!   or `[build-dependencies]`;
//! - no suite depends on another suite;
//! - the crates [`ABOVE_SUITES`] (`cb-grade`) may import the suites; only
//!   the root package, [`ROOT`] (the command line), imports them, and
//!   nothing imports the root or the `xtask`;
//! - a crate in [`ONLY`] imports no workspace crate but those listed
//!   (`cb-client`: `cb-base` and `cb-wire`);
//! - no crate has a cycle among its top-level modules (`modules`): none
//!   through `crate::` paths, and none through `super::` paths that climb
//!   to the crate root but the [`KNOWN_TANGLES`] (the check fails when one
//!   of those is gone, so that the list only shrinks). Cargo knows nothing
//!   of modules, so this part reads the sources (`src/` of each member) as
//!   it did before it moved here from the root package's tests.
//!
//! `cargo xtask graph` (and `scripts/crate-graph`) prints the crate graph
//! this reads, bottom-up.

use crate::metadata::{Kind, Member};
use crate::modules::{module_graph, tangles, Paths, Tangle};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

/// The suite crates: each imports the core only, never another suite.
pub const SUITES: [&str; 4] = ["cb-continuity", "cb-semantics", "cb-canary", "cb-overhead"];

/// Crates above the suites, which may import them: `grade` runs every suite
/// over one systems file. Checked when they are workspace members.
pub const ABOVE_SUITES: [&str; 1] = ["cb-grade"];

/// The root package, the command line: imports the suites and the crates
/// above them; nothing imports it.
pub const ROOT: &str = "continuity-bench";

/// Developer tooling: a workspace member nothing may import.
pub const XTASK: &str = "xtask";

/// Core crates held to a short list of the workspace crates they may
/// import, checked when they are workspace members: the HTTP client, which
/// the canary uses alone, rests on the base and the wire, never on the
/// driver, the upstreams or the proxies.
pub const ONLY: &[(&str, &[&str])] = &[("cb-client", &["cb-base", "cb-wire"])];

/// Top-level modules that import each other through `super::` paths
/// climbing to the crate root, found when this test was written, in crates
/// whose owners are to untangle them: in cb-dataset `generate` and `build`
/// import each other and `subjects` reads `generate`'s types; in cb-proxy
/// `core`, `dialect` and `relay` call each other (`dialect` reads `core`'s
/// reply types); in cb-upstream `server` routes to `dialect_routes`, which
/// reads `server`'s pipeline state. Any other tangle fails the test, and
/// so does one of these once it is gone: remove it here then.
pub const KNOWN_TANGLES: &[(&str, &[&str])] = &[
    (
        "cb-dataset",
        &[
            "build",
            "generate",
            "lexicon",
            "subjects",
            "subjects_composed",
            "taken",
        ],
    ),
    ("cb-proxy", &["core", "dialect", "relay"]),
    ("cb-upstream", &["dialect_routes", "server"]),
];

/// What breaks the rules between crates, one sentence each; empty when the
/// layers hold. Dependencies on packages outside `members` are not looked
/// at.
pub fn crate_violations(members: &[Member]) -> Vec<String> {
    let names: BTreeSet<&str> = members.iter().map(|m| m.name.as_str()).collect();
    let mut out = Vec::new();
    for suite in SUITES {
        if !names.contains(suite) {
            out.push(format!(
                "the suite {suite} is not a workspace member: update SUITES in xtask/src/layers.rs"
            ));
        }
    }
    let is_suite = |n: &str| SUITES.contains(&n);
    let is_above = |n: &str| ABOVE_SUITES.contains(&n);
    for m in members {
        let who = m.name.as_str();
        for (dep, kinds) in &m.deps {
            if !names.contains(dep.as_str()) {
                continue;
            }
            let tables = kinds
                .iter()
                .map(|k| k.table())
                .collect::<Vec<_>>()
                .join(", ");
            if dep == ROOT || dep == XTASK {
                out.push(format!(
                    "{who} depends on {dep} ({tables}): nothing imports the command line or the xtask; move what it needs into a core crate"
                ));
            } else if is_above(dep) && who != ROOT {
                out.push(format!(
                    "{who} depends on {dep} ({tables}), which sits above the suites: only the command line imports it; move what both need into a core crate"
                ));
            } else if is_suite(dep) && who != ROOT && !is_above(who) {
                let what = if is_suite(who) {
                    "a suite imports the core only, never another suite"
                } else if who.starts_with("cb-") {
                    "a core crate never imports a suite"
                } else {
                    "only the command line and the crates above the suites import the suites"
                };
                out.push(format!(
                    "{who} depends on the suite {dep} ({tables}): {what}; move what both need into a core crate"
                ));
            }
        }
        if let Some((_, allowed)) = ONLY.iter().find(|(n, _)| *n == who) {
            for (dep, kinds) in &m.deps {
                let kinds_normal = kinds.iter().any(|k| *k != Kind::Dev);
                if names.contains(dep.as_str()) && kinds_normal && !allowed.contains(&dep.as_str())
                {
                    out.push(format!(
                        "{who} depends on {dep}: it may import only {} (ONLY in xtask/src/layers.rs); move what it needs into one of them",
                        allowed.join(", ")
                    ));
                }
            }
        }
    }
    out
}

/// Every `.rs` file under `src`, as its path from `src` ('/'-separated)
/// and its text.
pub fn read_sources(src: &Path) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut pending = vec![src.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries =
            std::fs::read_dir(&dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        for entry in entries {
            let path = entry
                .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
                .path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                let relative = path
                    .strip_prefix(src)
                    .map_err(|e| e.to_string())?
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
                out.push((relative, text));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// What breaks the module rule in the crate `name` whose sources are
/// `sources`, one sentence each: every tangle through `crate::` paths, and
/// every tangle through `super::` paths too that is not in `known`, and
/// every `known` tangle that is gone.
pub fn module_violations(
    name: &str,
    sources: &[(String, String)],
    known: &[BTreeSet<String>],
) -> Vec<String> {
    let list = |t: &Tangle| t.modules.iter().cloned().collect::<Vec<_>>().join(", ");
    let mut out = Vec::new();
    for t in tangles(&module_graph(sources, Paths::Crate)) {
        out.push(format!(
            "{name}: the top-level modules {} import each other through crate:: paths ({}); move what they share into one of them, or into a module below both",
            list(&t),
            t.cycle.join(" -> ")
        ));
    }
    let found = tangles(&module_graph(sources, Paths::AlsoSuper));
    for t in found.iter().filter(|t| !known.contains(&t.modules)) {
        out.push(format!(
            "{name}: the top-level modules {} import each other ({}, counting super:: paths that climb to the crate root); move what they share into one of them, or into a module below both",
            list(t),
            t.cycle.join(" -> ")
        ));
    }
    for k in known
        .iter()
        .filter(|k| !found.iter().any(|t| t.modules == **k))
    {
        out.push(format!(
            "{name}: the modules {} no longer import each other as KNOWN_TANGLES in xtask/src/layers.rs says: remove or update its entry",
            k.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    out
}

/// The [`KNOWN_TANGLES`] of the crate `name`.
pub fn known_tangles(name: &str) -> Vec<BTreeSet<String>> {
    KNOWN_TANGLES
        .iter()
        .filter(|(c, _)| *c == name)
        .map(|(_, modules)| modules.iter().map(|m| m.to_string()).collect())
        .collect()
}

/// Each member's level: 0 for a crate that depends on no member, else one
/// more than the highest of those it depends on (with `dev` counting
/// dev-dependencies); `None` when they make a cycle.
fn levels<'m>(
    members: &'m [Member],
    names: &BTreeSet<&str>,
    dev: bool,
) -> Option<BTreeMap<&'m str, usize>> {
    let mut level: BTreeMap<&str, usize> = BTreeMap::new();
    while level.len() < members.len() {
        let before = level.len();
        for m in members {
            if level.contains_key(m.name.as_str()) {
                continue;
            }
            let below: Vec<&str> = m
                .deps
                .iter()
                .filter(|(d, k)| {
                    names.contains(d.as_str()) && (dev || k.iter().any(|k| *k != Kind::Dev))
                })
                .map(|(d, _)| d.as_str())
                .collect();
            if below.iter().all(|d| level.contains_key(d)) {
                let l = below.iter().map(|d| level[d] + 1).max().unwrap_or(0);
                level.insert(m.name.as_str(), l);
            }
        }
        if level.len() == before {
            return None;
        }
    }
    Some(level)
}

/// The crate graph, bottom-up: one line per member with the workspace
/// crates it depends on, dev-only ones marked. A crate comes after
/// everything it depends on, dev-dependencies included unless they make a
/// cycle (cargo allows one through a dev-dependency); crates of one level
/// sort by name.
pub fn crate_graph(members: &[Member]) -> String {
    let names: BTreeSet<&str> = members.iter().map(|m| m.name.as_str()).collect();
    let by_name: BTreeMap<&str, &Member> = members.iter().map(|m| (m.name.as_str(), m)).collect();
    let level = levels(members, &names, true)
        .or_else(|| levels(members, &names, false))
        .unwrap_or_default();
    let mut order: Vec<(&usize, &&str)> = level.iter().map(|(n, l)| (l, n)).collect();
    order.sort();
    let width = names.iter().map(|n| n.len()).max().unwrap_or(0);
    let mut out = String::new();
    for (_, name) in order {
        let m = by_name[*name];
        let deps: Vec<String> = m
            .deps
            .iter()
            .filter(|(d, _)| names.contains(d.as_str()))
            .map(|(d, k)| {
                if k.iter().all(|k| *k == Kind::Dev) {
                    format!("{d} (dev)")
                } else {
                    d.clone()
                }
            })
            .collect();
        let deps = if deps.is_empty() {
            "-".to_string()
        } else {
            deps.join(", ")
        };
        let _ = writeln!(out, "{name:width$}  {deps}");
    }
    out
}
