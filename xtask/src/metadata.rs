//! The workspace's crates and what each depends on, read from
//! `cargo metadata` rather than from the manifests by hand: cargo resolves
//! the members (globs, `default-members`, exclusions), renamed
//! dependencies, `workspace = true` and platform-specific tables itself.

use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// How a crate depends on another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// `[dependencies]`.
    Normal,
    /// `[build-dependencies]`.
    Build,
    /// `[dev-dependencies]`: tests, benchmarks and examples only.
    Dev,
}

impl Kind {
    /// The manifest table that gives this kind.
    pub fn table(self) -> &'static str {
        match self {
            Kind::Normal => "[dependencies]",
            Kind::Build => "[build-dependencies]",
            Kind::Dev => "[dev-dependencies]",
        }
    }
}

/// One workspace member.
#[derive(Debug, Clone)]
pub struct Member {
    /// The package name.
    pub name: String,
    /// The directory holding its `Cargo.toml`.
    pub dir: PathBuf,
    /// Every package it depends on (workspace member or not), by package
    /// name (not the name it is renamed to), with how.
    pub deps: BTreeMap<String, BTreeSet<Kind>>,
}

/// The part of `cargo metadata --format-version 1` read here.
#[derive(Debug, Deserialize)]
struct Metadata {
    packages: Vec<Package>,
    workspace_members: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct Package {
    name: String,
    id: String,
    manifest_path: PathBuf,
    dependencies: Vec<Dependency>,
}

#[derive(Debug, Deserialize)]
struct Dependency {
    /// The package's name (a renamed dependency's `package = ".."`).
    name: String,
    /// `null` for `[dependencies]`, else `"dev"` or `"build"`.
    kind: Option<String>,
}

/// The members of the workspace whose root manifest is `manifest`, from
/// `cargo metadata --no-deps` (offline: nothing is resolved or fetched).
pub fn workspace(manifest: &Path) -> Result<Vec<Member>, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(&cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .arg("--manifest-path")
        .arg(manifest)
        .output()
        .map_err(|e| format!("cannot run `cargo metadata` ({cargo:?}): {e}; is cargo on PATH?"))?;
    if !output.status.success() {
        return Err(format!(
            "`cargo metadata --manifest-path {}` failed: {}",
            manifest.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    parse(&output.stdout)
}

/// The members in the JSON `cargo metadata --format-version 1` printed,
/// sorted by name.
pub fn parse(json: &[u8]) -> Result<Vec<Member>, String> {
    let meta: Metadata = serde_json::from_slice(json)
        .map_err(|e| format!("cannot read the output of `cargo metadata`: {e}"))?;
    let members: BTreeSet<&str> = meta.workspace_members.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    for p in &meta.packages {
        if !members.contains(p.id.as_str()) {
            continue;
        }
        let mut deps: BTreeMap<String, BTreeSet<Kind>> = BTreeMap::new();
        for d in &p.dependencies {
            let kind = match d.kind.as_deref() {
                None | Some("normal") => Kind::Normal,
                Some("dev") => Kind::Dev,
                Some("build") => Kind::Build,
                Some(other) => {
                    return Err(format!(
                        "{}: unknown dependency kind {other:?} in `cargo metadata`'s output",
                        p.name
                    ))
                }
            };
            deps.entry(d.name.clone()).or_default().insert(kind);
        }
        let dir = p
            .manifest_path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        out.push(Member {
            name: p.name.clone(),
            dir,
            deps,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}
