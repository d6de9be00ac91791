//! The module graph of one crate, read from its sources (through
//! [`scan`](crate::scan)), and its cycles.
//!
//! The top-level modules of a crate are the files and directories directly
//! in its `src/` (`lib.rs` and `main.rs` excepted). Module A depends on
//! module B when A's code mentions B from the crate root: `crate::B`,
//! `$crate::B` or a `use crate::{B, ..}` group ([`Paths::Crate`]), and
//! with [`Paths::AlsoSuper`] a `super::` path that climbs to the root as
//! well (`super::B` in `src/a.rs` or `src/a/mod.rs`, `super::super::B` in
//! `src/a/x.rs`). Test code does not count: comments and literals are
//! skipped, and so is every `#[cfg(test)]` item (a `mod tests { .. }`
//! block, or the file of a `#[cfg(test)] mod x;`), every file named
//! `tests.rs` or `*_tests.rs`, everything under a `tests/` directory, and a
//! file that opens with `#![cfg(test)]`. A glob
//! (`use crate::*`) names no module and is not followed, nor is a name the
//! crate root re-exports (`crate::FaultProfile` names no module, though
//! `profile` defines it).

use crate::scan::{scan, Scan};
use std::collections::{BTreeMap, BTreeSet};

/// Top-level module -> the top-level modules it depends on.
pub type Graph = BTreeMap<String, BTreeSet<String>>;

/// Which paths make a dependency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paths {
    /// Paths that start at `crate` (or `$crate`).
    Crate,
    /// Those, and `super::` paths that climb to the crate root.
    AlsoSuper,
}

/// Modules that import each other: a strongly connected part of a graph,
/// with one cycle through it as an example.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tangle {
    /// The modules, each reachable from every other.
    pub modules: BTreeSet<String>,
    /// One cycle among them, the first module repeated at the end.
    pub cycle: Vec<String>,
}

/// The graph of the crate whose `src/` holds `files`: (path from `src`,
/// '/'-separated, text), with the dependencies `paths` makes.
pub fn module_graph(files: &[(String, String)], paths: Paths) -> Graph {
    let scanned: Vec<(&str, Scan)> = files
        .iter()
        .map(|(path, text)| (path.as_str(), scan(text, depth(path))))
        .collect();
    // Files of out-of-line `#[cfg(test)] mod x;` declarations: `x.rs` or
    // `x/` in the directory the declaring file's children live in.
    let mut test_only: Vec<String> = Vec::new();
    for (path, s) in &scanned {
        let children = children_dir(path);
        for name in &s.test_modules {
            test_only.push(format!("{children}{name}"));
        }
    }
    let is_test = |path: &str| {
        let mut parts = path.split('/').peekable();
        let mut test = false;
        while let Some(part) = parts.next() {
            let last = parts.peek().is_none();
            test |= if last {
                part == "tests.rs" || part.ends_with("_tests.rs")
            } else {
                part == "tests"
            };
        }
        test || test_only.iter().any(|t| {
            path.strip_suffix(".rs") == Some(t.as_str())
                || path
                    .strip_prefix(t.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
        })
    };
    let mut graph = Graph::new();
    for (path, _) in &scanned {
        if let Some(module) = top_level(path) {
            if !is_test(path) {
                graph.entry(module.to_string()).or_default();
            }
        }
    }
    for (path, s) in &scanned {
        let Some(module) = top_level(path) else {
            continue;
        };
        if is_test(path) || s.test_file {
            continue;
        }
        let climbed = match paths {
            Paths::Crate => None,
            Paths::AlsoSuper => Some(&s.super_refs),
        };
        for target in s.refs.iter().chain(climbed.into_iter().flatten()) {
            if target == module || !graph.contains_key(target) {
                continue;
            }
            if let Some(deps) = graph.get_mut(module) {
                deps.insert(target.clone());
            }
        }
    }
    graph
}

/// Every tangle of `graph`, in module order; none when it is acyclic.
pub fn tangles(graph: &Graph) -> Vec<Tangle> {
    let reach = |from: &str| {
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let mut pending: Vec<&str> = graph
            .get(from)
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect();
        while let Some(n) = pending.pop() {
            if seen.insert(n) {
                pending.extend(graph.get(n).into_iter().flatten().map(String::as_str));
            }
        }
        seen
    };
    let reaches: BTreeMap<&str, BTreeSet<&str>> =
        graph.keys().map(|n| (n.as_str(), reach(n))).collect();
    let mut out: Vec<Tangle> = Vec::new();
    for (node, from_node) in &reaches {
        if !from_node.contains(node) || out.iter().any(|t| t.modules.contains(*node)) {
            continue;
        }
        let modules: BTreeSet<String> = from_node
            .iter()
            .filter(|m| reaches[*m].contains(node))
            .map(|m| m.to_string())
            .collect();
        let inside: Graph = modules
            .iter()
            .map(|m| {
                (
                    m.clone(),
                    graph[m].intersection(&modules).cloned().collect(),
                )
            })
            .collect();
        let cycle = find_cycle(&inside).unwrap_or_default();
        out.push(Tangle { modules, cycle });
    }
    out
}

/// A cycle of `graph`, as the modules along it with the first repeated at
/// the end (`["a", "b", "a"]`), or `None` when the graph is acyclic. The
/// same graph always gives the same cycle.
pub fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit<'g>(
        node: &'g str,
        graph: &'g Graph,
        marks: &mut BTreeMap<&'g str, Mark>,
        path: &mut Vec<&'g str>,
    ) -> Option<Vec<String>> {
        marks.insert(node, Mark::Open);
        path.push(node);
        for next in graph.get(node).into_iter().flatten() {
            match marks.get(next.as_str()) {
                Some(Mark::Open) => {
                    let start = path.iter().position(|n| *n == next)?;
                    let mut cycle: Vec<String> =
                        path[start..].iter().map(|n| n.to_string()).collect();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Some(Mark::Done) => {}
                None => {
                    if let Some(cycle) = visit(next, graph, marks, path) {
                        return Some(cycle);
                    }
                }
            }
        }
        path.pop();
        marks.insert(node, Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for node in graph.keys() {
        if !marks.contains_key(node.as_str()) {
            if let Some(cycle) = visit(node, graph, &mut marks, &mut Vec::new()) {
                return Some(cycle);
            }
        }
    }
    None
}

/// The top-level module a file belongs to: `a` for `a.rs` and everything
/// under `a/`; `None` for `lib.rs` and `main.rs`.
fn top_level(path: &str) -> Option<&str> {
    match path.split_once('/') {
        Some((dir, _)) => Some(dir),
        None if path == "lib.rs" || path == "main.rs" => None,
        None => path.strip_suffix(".rs"),
    }
}

/// How deep below the crate root a file's module sits: 0 for `lib.rs`, 1
/// for `a.rs` and `a/mod.rs`, 2 for `a/x.rs`.
fn depth(path: &str) -> usize {
    let parts = path.split('/').count();
    if path.ends_with("mod.rs") || path == "lib.rs" || path == "main.rs" {
        parts - 1
    } else {
        parts
    }
}

/// Where the files of a file's child modules live, with a trailing '/'
/// (or empty for the crate root).
fn children_dir(path: &str) -> String {
    let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
    let file = path.rsplit('/').next().unwrap_or(path);
    let own = match file {
        "mod.rs" | "lib.rs" | "main.rs" => dir.to_string(),
        _ => {
            let stem = file.trim_end_matches(".rs");
            if dir.is_empty() {
                stem.to_string()
            } else {
                format!("{dir}/{stem}")
            }
        }
    };
    if own.is_empty() {
        own
    } else {
        own + "/"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_map_to_their_modules() {
        assert_eq!(top_level("a.rs"), Some("a"));
        assert_eq!(top_level("a/x/y.rs"), Some("a"));
        assert_eq!(top_level("lib.rs"), None);
        assert_eq!(depth("a.rs"), 1);
        assert_eq!(depth("a/mod.rs"), 1);
        assert_eq!(depth("a/x.rs"), 2);
        assert_eq!(children_dir("lib.rs"), "");
        assert_eq!(children_dir("a.rs"), "a/");
        assert_eq!(children_dir("a/mod.rs"), "a/");
        assert_eq!(children_dir("a/x.rs"), "a/x/");
    }
}
