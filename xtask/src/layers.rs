//! The layers of the workspace, checked by a test so that nothing rests on
//! review alone: the compiler refuses a dependency cycle between crates, but
//! not a core crate that imports a suite, one suite that imports another,
//! or two modules of a crate that import each other.
//!
//! Every workspace member's `Cargo.toml` is read (with `toml`), and:
//!
//! - the suite crates are [`SUITES`]; no core crate (every other `cb-*`
//!   crate) depends on a suite, in `[dependencies]`, `[dev-dependencies]`
//!   or `[build-dependencies]`;
//! - no suite depends on another suite;
//! - only the root package, [`ROOT`] (the command line), depends on the
//!   suites, and nothing depends on it;
//! - no crate has a cycle among its top-level modules ([`modules`]): none
//!   through `crate::` paths, and none through `super::` paths that climb
//!   to the crate root but the [`KNOWN_TANGLES`] (the test fails when one
//!   of those is gone, so that the list only shrinks).
//!
//! `scripts/crate-graph` prints the crate graph this reads, bottom-up.

mod modules;
mod scan;

use modules::{module_graph, tangles, Paths, Tangle};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The suite crates: each imports the core only, never another suite.
const SUITES: [&str; 3] = ["cb-continuity", "cb-semantics", "cb-canary"];

/// The root package, the command line: the one crate that imports the suites.
const ROOT: &str = "continuity-bench";

/// Top-level modules that import each other through `super::` paths
/// climbing to the crate root, found when this test was written, in crates
/// whose owners are to untangle them: in cb-dataset `generate` and `build`
/// import each other and `subjects` reads `generate`'s types; in cb-proxy
/// `core`, `dialect` and `relay` call each other (`dialect` reads `core`'s
/// reply types); in cb-upstream `server` routes to `dialect_routes`, which
/// reads `server`'s pipeline state. Any other tangle fails the test, and
/// so does one of these once it is gone: remove it here then.
const KNOWN_TANGLES: &[(&str, &[&str])] = &[
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

/// The tables of a manifest that name dependencies, with the kind each
/// gives.
const DEPENDENCY_TABLES: [(&str, Kind); 3] = [
    ("dependencies", Kind::Normal),
    ("build-dependencies", Kind::Build),
    ("dev-dependencies", Kind::Dev),
];

/// How a crate depends on another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// `[dependencies]`.
    Normal,
    /// `[build-dependencies]`.
    Build,
    /// `[dev-dependencies]`: tests, benchmarks and examples only.
    Dev,
}

impl Kind {
    /// The manifest table that gives this kind.
    fn table(self) -> &'static str {
        match self {
            Kind::Normal => "[dependencies]",
            Kind::Build => "[build-dependencies]",
            Kind::Dev => "[dev-dependencies]",
        }
    }
}

/// One workspace member, as its manifest declares it.
#[derive(Debug, Clone)]
struct Member {
    /// The package name.
    name: String,
    /// The directory holding its `Cargo.toml`.
    dir: PathBuf,
    /// Every package it depends on (workspace member or not), with how.
    deps: BTreeMap<String, BTreeSet<Kind>>,
}

/// What breaks the rules between crates, one sentence each; empty when the
/// layers hold. Dependencies on packages outside `members` are not looked
/// at.
fn crate_violations(members: &[Member]) -> Vec<String> {
    let names: BTreeSet<&str> = members.iter().map(|m| m.name.as_str()).collect();
    let mut out = Vec::new();
    for suite in SUITES {
        if !names.contains(suite) {
            out.push(format!(
                "the suite {suite} is not a workspace member: update SUITES in src/layers/mod.rs"
            ));
        }
    }
    for m in members {
        for (dep, kinds) in &m.deps {
            if !names.contains(dep.as_str()) {
                continue;
            }
            let tables = kinds
                .iter()
                .map(|k| k.table())
                .collect::<Vec<_>>()
                .join(", ");
            let who = &m.name;
            if dep == ROOT {
                out.push(format!(
                    "{who} depends on {ROOT} ({tables}): nothing imports the command line; move what it needs into a core crate"
                ));
            } else if SUITES.contains(&dep.as_str()) && *who != ROOT {
                let what = if SUITES.contains(&who.as_str()) {
                    "a suite imports the core only, never another suite"
                } else if who.starts_with("cb-") {
                    "a core crate never imports a suite"
                } else {
                    "only the command line imports the suites"
                };
                out.push(format!(
                    "{who} depends on the suite {dep} ({tables}): {what}; move what both need into a core crate"
                ));
            }
        }
    }
    out
}

/// The workspace members named by the manifest in `root`: its own package
/// (if it has one) and every `members` entry, a `dir/*` entry meaning each
/// directory in `dir` that holds a `Cargo.toml`.
fn read_members(root: &Path) -> Result<Vec<Member>, String> {
    let manifest = read_manifest(&root.join("Cargo.toml"))?;
    let mut dirs = Vec::new();
    if manifest.contains_key("package") {
        dirs.push(root.to_path_buf());
    }
    let patterns = manifest
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(|m| m.as_array())
        .ok_or("the root Cargo.toml has no [workspace] members")?;
    for pattern in patterns {
        let pattern = pattern
            .as_str()
            .ok_or("a workspace member is not a string")?;
        if let Some(parent) = pattern.strip_suffix("/*") {
            let parent = root.join(parent);
            let entries = std::fs::read_dir(&parent)
                .map_err(|e| format!("cannot list {}: {e}", parent.display()))?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|d| d.join("Cargo.toml").is_file())
                .collect();
            found.sort();
            dirs.extend(found);
        } else {
            dirs.push(root.join(pattern));
        }
    }
    dirs.into_iter().map(|dir| read_member(&dir)).collect()
}

/// One member from `dir/Cargo.toml`: its name and what it depends on, in
/// each dependency table, platform-specific ones (`[target.'cfg(..)'.*]`)
/// included. A dependency renamed with `package = ".."` is named by its
/// package.
fn read_member(dir: &Path) -> Result<Member, String> {
    let path = dir.join("Cargo.toml");
    let manifest = read_manifest(&path)?;
    let name = manifest
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str())
        .ok_or_else(|| format!("{} has no package name", path.display()))?
        .to_string();
    let mut tables = vec![&manifest];
    if let Some(targets) = manifest.get("target").and_then(|t| t.as_table()) {
        tables.extend(targets.values().filter_map(|t| t.as_table()));
    }
    let mut deps: BTreeMap<String, BTreeSet<Kind>> = BTreeMap::new();
    for table in tables {
        for (key, kind) in DEPENDENCY_TABLES {
            let Some(entries) = table.get(key).and_then(|d| d.as_table()) else {
                continue;
            };
            for (dep, spec) in entries {
                let package = spec.get("package").and_then(|p| p.as_str()).unwrap_or(dep);
                deps.entry(package.to_string()).or_default().insert(kind);
            }
        }
    }
    Ok(Member {
        name,
        dir: dir.to_path_buf(),
        deps,
    })
}

fn read_manifest(path: &Path) -> Result<toml::Table, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    text.parse()
        .map_err(|e| format!("cannot parse {}: {e}", path.display()))
}

/// Every `.rs` file under `src`, as its path from `src` ('/'-separated)
/// and its text.
fn read_sources(src: &Path) -> Result<Vec<(String, String)>, String> {
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
fn module_violations(
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
            "{name}: the modules {} no longer import each other as KNOWN_TANGLES in src/layers/mod.rs says: remove or update its entry",
            k.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    out
}

/// The [`KNOWN_TANGLES`] of the crate `name`.
fn known_tangles(name: &str) -> Vec<BTreeSet<String>> {
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
fn crate_graph(members: &[Member]) -> String {
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

/// The members of this workspace, whose manifest is the root package's.
fn workspace() -> Vec<Member> {
    read_members(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_suites_sit_above_the_core_and_beside_each_other() {
    let members = workspace();
    assert!(members.len() > SUITES.len() + 1, "{members:?}");
    let violations = crate_violations(&members);
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

#[test]
fn no_crate_has_a_module_cycle() {
    let members = workspace();
    let mut violations = Vec::new();
    for (name, _) in KNOWN_TANGLES {
        if !members.iter().any(|m| m.name == *name) {
            violations.push(format!(
                "KNOWN_TANGLES names {name}, which is not a workspace member: update it"
            ));
        }
    }
    for member in members {
        let sources = read_sources(&member.dir.join("src")).unwrap_or_else(|e| panic!("{e}"));
        assert!(!sources.is_empty(), "{} has no sources", member.name);
        violations.extend(module_violations(
            &member.name,
            &sources,
            &known_tangles(&member.name),
        ));
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

/// Prints the crate graph (`scripts/crate-graph` shows it).
#[test]
fn print_the_crate_graph() {
    let members = workspace();
    let graph = crate_graph(&members);
    assert_eq!(graph.lines().count(), members.len(), "{graph}");
    println!(
        "crate graph, bottom-up (each crate, then the workspace crates it depends on):\n{graph}"
    );
}

mod tests;
