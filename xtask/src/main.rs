//! `cargo xtask`: developer tooling of continuity-bench, kept out of the
//! product's crates.
//!
//! - `cargo xtask layers`: the layer check of the workspace (see
//!   [`layers`]): exits 1 naming every crate that imports one above it and
//!   every module tangle, 0 when the layers hold;
//! - `cargo xtask graph`: the crate graph, bottom-up.
//!
//! Both read the crates from `cargo metadata`. The check also runs as a
//! test of this crate (`cargo test -p xtask`, and `cargo test` at the root,
//! whose default members include it).

mod layers;
mod metadata;
mod modules;
mod scan;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The workspace's root manifest: this crate sits in `xtask/` under it.
fn root_manifest() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or(Path::new("."))
        .join("Cargo.toml")
}

/// Every violation of the layer rules in the workspace at `manifest`,
/// crates then modules, one sentence each.
fn check(manifest: &Path) -> Result<Vec<String>, String> {
    let members = metadata::workspace(manifest)?;
    let mut violations = layers::crate_violations(&members);
    for (name, _) in layers::KNOWN_TANGLES {
        if !members.iter().any(|m| m.name == *name) {
            violations.push(format!(
                "KNOWN_TANGLES names {name}, which is not a workspace member: update it in xtask/src/layers.rs"
            ));
        }
    }
    for member in &members {
        let sources = layers::read_sources(&member.dir.join("src"))?;
        if sources.is_empty() {
            return Err(format!("{} has no sources under src/", member.name));
        }
        violations.extend(layers::module_violations(
            &member.name,
            &sources,
            &layers::known_tangles(&member.name),
        ));
    }
    Ok(violations)
}

fn main() -> ExitCode {
    let task = std::env::args().nth(1).unwrap_or_default();
    let manifest = root_manifest();
    match task.as_str() {
        "layers" => match check(&manifest) {
            Ok(v) if v.is_empty() => {
                println!("layers hold: no crate imports one above it, no module tangle");
                ExitCode::SUCCESS
            }
            Ok(v) => {
                eprintln!("the layers are broken ({}):", v.len());
                for line in v {
                    eprintln!("  {line}");
                }
                ExitCode::FAILURE
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        },
        "graph" => {
            match metadata::workspace(&manifest) {
                Ok(members) => {
                    println!("crate graph, bottom-up (each crate, then the workspace crates it depends on):");
                    print!("{}", layers::crate_graph(&members));
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
        _ => {
            eprintln!(
                "usage: cargo xtask layers   check that no crate imports one above it\n       cargo xtask graph    print the crate graph, bottom-up"
            );
            ExitCode::from(2)
        }
    }
}
