//! The checker checked (the positive control): a small workspace held in
//! memory, with a core crate that imports a suite, a suite that imports
//! another and a crate whose modules import each other in a ring, must be
//! reported, each by name; the same workspace without them must pass, test
//! code, comments and strings must not count, and a known tangle that is
//! gone must be reported too. Then the same checks on this workspace, as
//! `cargo xtask layers` runs them, so that `cargo test` keeps them.

#![allow(clippy::unwrap_used)]

use crate::layers::*;
use crate::metadata::{Kind, Member};
use crate::modules::{find_cycle, module_graph, tangles, Graph, Paths};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

fn member(name: &str, deps: &[(&str, Kind)]) -> Member {
    let mut map: BTreeMap<String, BTreeSet<Kind>> = BTreeMap::new();
    for (dep, kind) in deps {
        map.entry(dep.to_string()).or_default().insert(*kind);
    }
    Member {
        name: name.to_string(),
        dir: PathBuf::from(name),
        deps: map,
    }
}

/// The command line over four suites over a core of two crates.
fn layered() -> Vec<Member> {
    use Kind::{Dev, Normal};
    vec![
        member(
            ROOT,
            &[
                ("cb-continuity", Normal),
                ("cb-semantics", Normal),
                ("cb-canary", Normal),
                ("cb-overhead", Normal),
                ("cb-base", Normal),
                ("cb-testkit", Dev),
            ],
        ),
        member("cb-base", &[("serde", Normal)]),
        member("cb-testkit", &[("cb-base", Normal)]),
        member("cb-faults", &[("cb-base", Normal), ("cb-testkit", Dev)]),
        member(
            "cb-continuity",
            &[("cb-faults", Normal), ("cb-testkit", Dev)],
        ),
        member("cb-semantics", &[("cb-faults", Normal)]),
        member("cb-canary", &[("cb-base", Normal)]),
        member("cb-overhead", &[("cb-faults", Normal)]),
    ]
}

fn add(members: &mut [Member], from: &str, to: &str, kind: Kind) {
    let m = members.iter_mut().find(|m| m.name == from).unwrap();
    m.deps.entry(to.to_string()).or_default().insert(kind);
}

#[test]
fn the_layered_workspace_passes() {
    assert_eq!(crate_violations(&layered()), Vec::<String>::new());
}

#[test]
fn a_bad_edge_is_reported_by_name() {
    let mut bad = layered();
    add(&mut bad, "cb-faults", "cb-continuity", Kind::Dev);
    add(&mut bad, "cb-semantics", "cb-canary", Kind::Normal);
    add(&mut bad, "cb-base", ROOT, Kind::Normal);
    let v = crate_violations(&bad);
    assert_eq!(v.len(), 3, "{v:#?}");
    let has = |start: &str| assert!(v.iter().any(|l| l.starts_with(start)), "{start}\n{v:#?}");
    has("cb-faults depends on the suite cb-continuity ([dev-dependencies]): a core crate never imports a suite");
    has("cb-semantics depends on the suite cb-canary ([dependencies]): a suite imports the core only");
    has("cb-base depends on continuity-bench ([dependencies]): nothing imports the command line");

    let mut missing = layered();
    missing.retain(|m| m.name != "cb-canary");
    let v = crate_violations(&missing);
    assert_eq!(v.len(), 1, "{v:#?}");
    assert!(v[0].starts_with("the suite cb-canary is not a workspace member"));
}

#[test]
fn the_crates_above_the_suites_and_the_short_lists_are_held() {
    use Kind::{Dev, Normal};
    let mut ws = layered();
    ws.push(member(
        "cb-grade",
        &[("cb-continuity", Normal), ("cb-semantics", Normal)],
    ));
    ws.push(member("cb-wire", &[("cb-base", Normal)]));
    ws.push(member(
        "cb-client",
        &[
            ("cb-base", Normal),
            ("cb-wire", Normal),
            ("cb-testkit", Dev),
        ],
    ));
    add(&mut ws, ROOT, "cb-grade", Normal);
    assert_eq!(crate_violations(&ws), Vec::<String>::new());

    let mut bad = ws.clone();
    add(&mut bad, "cb-continuity", "cb-grade", Normal);
    add(&mut bad, "cb-client", "cb-faults", Normal);
    add(&mut bad, "cb-base", XTASK, Dev);
    bad.push(member(XTASK, &[]));
    let v = crate_violations(&bad);
    assert_eq!(v.len(), 3, "{v:#?}");
    let has = |start: &str| assert!(v.iter().any(|l| l.starts_with(start)), "{start}\n{v:#?}");
    has("cb-continuity depends on cb-grade ([dependencies]), which sits above the suites");
    has("cb-client depends on cb-faults: it may import only cb-base, cb-wire");
    has("cb-base depends on xtask ([dev-dependencies]): nothing imports");
}

#[test]
fn cargo_metadata_gives_every_dependency_kind_by_package_name() {
    // A real workspace on disk, read by the real `cargo metadata`: a
    // renamed dependency, a dev one and a platform-specific build one.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("Cargo.toml"),
        "[workspace]\nmembers = [\"core\", \"base\", \"suite\", \"semantics\"]\nresolver = \"2\"\n",
    )
    .unwrap();
    let krate = |dir: &str, name: &str, deps: &str| {
        std::fs::create_dir_all(root.join(dir).join("src")).unwrap();
        std::fs::write(root.join(dir).join("src/lib.rs"), "").unwrap();
        std::fs::write(
            root.join(dir).join("Cargo.toml"),
            format!(
                "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n{deps}"
            ),
        )
        .unwrap();
    };
    krate("base", "cb-base", "");
    krate("suite", "cb-continuity", "");
    krate("semantics", "cb-semantics", "");
    krate(
        "core",
        "cb-core",
        "[dependencies]\ncb-base = { path = \"../base\" }\n\
         [dev-dependencies]\nsuite = { path = \"../suite\", package = \"cb-continuity\" }\n\
         [target.'cfg(unix)'.build-dependencies]\ncb-semantics = { path = \"../semantics\" }\n",
    );
    let members = crate::metadata::workspace(&root.join("Cargo.toml")).unwrap();
    let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        ["cb-base", "cb-continuity", "cb-core", "cb-semantics"]
    );
    let m = &members[2];
    let kinds = |d: &str| m.deps.get(d).cloned().unwrap_or_default();
    assert_eq!(kinds("cb-base"), BTreeSet::from([Kind::Normal]));
    assert_eq!(kinds("cb-continuity"), BTreeSet::from([Kind::Dev]));
    assert_eq!(kinds("cb-semantics"), BTreeSet::from([Kind::Build]));
    // And the rules see both of its edges to the suites.
    let v = crate_violations(&members);
    assert!(
        v.iter().any(|l| l.starts_with(
            "cb-core depends on the suite cb-continuity ([dev-dependencies]): a core crate never imports a suite"
        )),
        "{v:#?}"
    );
    assert!(
        v.iter()
            .any(|l| l
                .starts_with("cb-core depends on the suite cb-semantics ([build-dependencies])")),
        "{v:#?}"
    );
}

fn files(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect()
}

fn edges(graph: &Graph) -> Vec<String> {
    graph
        .iter()
        .flat_map(|(a, bs)| bs.iter().map(move |b| format!("{a}->{b}")))
        .collect()
}

fn set(modules: &[&str]) -> BTreeSet<String> {
    modules.iter().map(|m| m.to_string()).collect()
}

/// Modules a, b, c and d: a -> b through `crate::`, b -> c through
/// `super::super::` (from b/inner.rs), and `c_to_a` closes the ring
/// through a `crate::{..}` group; test code, comments and strings name
/// every module without counting.
fn ring(c_to_a: &str) -> Vec<(String, String)> {
    files(&[
        ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\npub mod d;\n#[cfg(test)]\nmod fixture;\n#[cfg(test)]\nmod tests;\n"),
        ("a.rs", "use crate::b::B;\npub struct A;\nconst S: &str = \"crate::c\";\n#[cfg(test)]\nmod tests {\n    use crate::c::C;\n}\n"),
        ("b/mod.rs", "mod inner;\npub struct B;\n"),
        ("b/inner.rs", "use super::super::c::C;\n"),
        ("b/inner_tests.rs", "use crate::a::A;\n"),
        ("c.rs", c_to_a),
        ("d.rs", "/* use crate::a::A; */\npub struct D;\n"),
        ("tests.rs", "use crate::c::C;\nuse crate::b::B;\n"),
        ("fixture.rs", "use crate::a::A;\n"),
        ("fixture/more.rs", "use crate::b::B;\n"),
        ("tests/support.rs", "use crate::b::B;\n"),
    ])
}

const C_TO_A: &str = "use crate::{a::A as _, self as _};\npub struct C;\n";
const C_ALONE: &str = "pub struct C; // crate::a::A\n";

#[test]
fn the_graph_reads_only_the_code_of_the_product() {
    assert_eq!(
        edges(&module_graph(&ring(C_TO_A), Paths::Crate)),
        ["a->b", "c->a"]
    );
    let full = module_graph(&ring(C_TO_A), Paths::AlsoSuper);
    assert_eq!(full.keys().collect::<Vec<_>>(), ["a", "b", "c", "d"]);
    assert_eq!(edges(&full), ["a->b", "b->c", "c->a"]);
}

#[test]
fn a_module_cycle_is_reported_by_its_modules() {
    let full = module_graph(&ring(C_TO_A), Paths::AlsoSuper);
    assert_eq!(
        find_cycle(&full).expect("a -> b -> c -> a is a cycle"),
        ["a", "b", "c", "a"]
    );
    let found = tangles(&full);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].modules, set(&["a", "b", "c"]));
    let v = module_violations("cb-ring", &ring(C_TO_A), &[]);
    assert_eq!(v.len(), 1, "{v:#?}");
    assert!(
        v[0].starts_with("cb-ring: the top-level modules a, b, c import each other (a -> b -> c -> a, counting super:: paths"),
        "{}",
        v[0]
    );
    // A known tangle passes; the same ring through crate:: paths alone
    // never does.
    assert_eq!(
        module_violations("cb-ring", &ring(C_TO_A), &[set(&["a", "b", "c"])]),
        Vec::<String>::new()
    );
    let mut crate_ring = ring(C_TO_A);
    let inner = crate_ring
        .iter_mut()
        .find(|(p, _)| p == "b/inner.rs")
        .unwrap();
    inner.1 = "use crate::c::C;\n".into();
    let v = module_violations("cb-ring", &crate_ring, &[set(&["a", "b", "c"])]);
    assert_eq!(v.len(), 1, "{v:#?}");
    assert!(
        v[0].contains("a, b, c import each other through crate:: paths (a -> b -> c -> a)"),
        "{}",
        v[0]
    );
}

#[test]
fn without_the_closing_edge_there_is_no_cycle_and_a_known_one_is_stale() {
    let full = module_graph(&ring(C_ALONE), Paths::AlsoSuper);
    assert_eq!(edges(&full), ["a->b", "b->c"]);
    assert_eq!(find_cycle(&full), None);
    assert!(tangles(&full).is_empty());
    assert_eq!(
        module_violations("cb-ring", &ring(C_ALONE), &[]),
        Vec::<String>::new()
    );
    let v = module_violations("cb-ring", &ring(C_ALONE), &[set(&["a", "b", "c"])]);
    assert_eq!(v.len(), 1, "{v:#?}");
    assert!(
        v[0].starts_with("cb-ring: the modules a, b, c no longer import each other"),
        "{}",
        v[0]
    );
}

#[test]
fn the_graph_prints_bottom_up() {
    let graph = crate_graph(&layered());
    let names: Vec<&str> = graph
        .lines()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "cb-base",
            "cb-canary",
            "cb-testkit",
            "cb-faults",
            "cb-continuity",
            "cb-overhead",
            "cb-semantics",
            ROOT
        ]
    );
    assert!(
        graph.contains("cb-faults         cb-base, cb-testkit (dev)\n"),
        "{graph}"
    );
    assert!(graph.contains("cb-base           -\n"), "{graph}");
}

/// The members of this workspace, from `cargo metadata`.
fn workspace() -> Vec<Member> {
    crate::metadata::workspace(&crate::root_manifest()).unwrap_or_else(|e| panic!("{e}"))
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
    let violations = crate::check(&crate::root_manifest()).unwrap_or_else(|e| panic!("{e}"));
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

#[test]
fn the_crate_graph_has_one_line_per_member() {
    let members = workspace();
    let graph = crate_graph(&members);
    assert_eq!(graph.lines().count(), members.len(), "{graph}");
}
