//! The help texts of `--faults` and `--dataset`, written from the registries
//! of built-in fault profiles and datasets (`cb_faults::BUILTIN_PROFILES`,
//! `cb_dataset::BUILTIN_DATASETS`), so that a built-in added there is named
//! in every `--help` that takes it without anyone editing a doc comment.

use crate::source::BuiltIn;

/// The names a built-in answers to on the command line (their stems), in
/// registry order.
fn names(builtins: &[BuiltIn]) -> String {
    builtins
        .iter()
        .map(BuiltIn::stem)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The help of `--faults`: a file, or one of the built-in profiles, each
/// named; the first is the default.
pub fn faults_help() -> String {
    let all = &crate::faults::BUILTIN_PROFILES;
    format!(
        "Fault profile (TOML): a file, or the name of a built-in one ({}). Default: the built-in {} profile.",
        names(all),
        all[0].stem()
    )
}

/// The help of `--dataset`: a file, or one of the built-in datasets, each
/// named with its path; the first is the default.
pub fn dataset_help(what: &str) -> String {
    let all = &crate::dataset::BUILTIN_DATASETS;
    let listed: Vec<String> = all
        .iter()
        .map(|b| format!("{} ({})", b.stem(), b.path))
        .collect();
    format!(
        "Dataset (JSONL){what}: a file, or the name of a built-in one: {}. Default: the built-in {}.",
        listed.join(", "),
        all[0].stem()
    )
}

#[cfg(test)]
mod tests {
    use super::super::Cli;
    use clap::CommandFactory;

    /// The rendered `--help` of every subcommand (and sub-subcommand) that
    /// has the argument `long`, with its path.
    fn helps_with(long: &str) -> Vec<(String, String)> {
        fn walk(
            cmd: &mut clap::Command,
            path: String,
            long: &str,
            out: &mut Vec<(String, String)>,
        ) {
            if cmd.get_arguments().any(|a| a.get_long() == Some(long)) {
                out.push((path.clone(), cmd.render_long_help().to_string()));
            }
            let names: Vec<String> = cmd
                .get_subcommands()
                .map(|s| s.get_name().to_string())
                .collect();
            for name in names {
                if let Some(sub) = cmd.find_subcommand_mut(&name) {
                    walk(sub, format!("{path} {name}"), long, out);
                }
            }
        }
        let mut cmd = Cli::command();
        cmd.build();
        let mut out = Vec::new();
        walk(&mut cmd, "continuity-bench".into(), long, &mut out);
        out
    }

    /// Asserts that every `--help` with `long` names every built-in.
    fn every_help_names(long: &str, builtins: &[crate::source::BuiltIn], at_least: usize) {
        let helps = helps_with(long);
        assert!(
            helps.len() >= at_least,
            "expected {at_least} commands with {long}, found {:?}",
            helps.iter().map(|(p, _)| p).collect::<Vec<_>>()
        );
        for (path, help) in &helps {
            // Joined, as a terminal wraps it: the test is on words, not lines.
            let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
            for b in builtins {
                assert!(
                    flat.contains(b.stem()),
                    "`{path} --help` does not name the built-in {} ({}) under {long}",
                    b.stem(),
                    b.path
                );
            }
        }
    }

    #[test]
    fn every_built_in_profile_is_named_in_every_help_that_takes_faults() {
        // run and upstreams take --faults.
        every_help_names("faults", &crate::faults::BUILTIN_PROFILES, 2);
    }

    #[test]
    fn every_built_in_dataset_is_named_in_every_help_that_takes_dataset() {
        // run, upstreams and grade take --dataset.
        every_help_names("dataset", &crate::dataset::BUILTIN_DATASETS, 3);
    }

    #[test]
    fn the_check_trips_on_a_help_missing_a_built_in() {
        // Positive control: a built-in the help cannot name is reported.
        let ghost = [crate::source::BuiltIn {
            path: "fault_profiles/not-a-built-in-profile.toml",
            text: "",
        }];
        let caught = std::panic::catch_unwind(|| every_help_names("faults", &ghost, 2));
        assert!(caught.is_err(), "a missing built-in went unnoticed");
    }
}
