//! `report merge DIR...`: join the shard directories of one run into one
//! report, write it and print its table. The checks and the figures are
//! the continuity suite's ([`crate::continuity::merge`]); a refusal is an
//! error (exit 2) naming the directory.

use crate::cli::MergeArgs;
use crate::report::dir::{claim_given, claim_unique, default_report_dir};
use anyhow::Context as _;
use std::process::ExitCode;

/// `report merge`: checks and merges the shards, then claims the output
/// directory (never overwriting a report) and writes every file of a
/// report into it.
pub fn merge(args: &MergeArgs) -> anyhow::Result<ExitCode> {
    let data = crate::continuity::merge::merge(&args.dirs)?;
    let out = match &args.out {
        Some(path) => claim_given(path, args.force)?,
        None => claim_unique(&default_report_dir(time::OffsetDateTime::now_utc()))?,
    };
    crate::continuity::report::write_report(&out, &data)
        .with_context(|| format!("cannot write the merged report in {}", out.display()))?;
    crate::secret::print!(
        "{}",
        crate::continuity::report::render_table(
            &data.summary,
            crate::cli::table_columns(args.wide),
        )
    );
    crate::secret::println!(
        "merged {} shards ({} conversations) · report in {}",
        data.config.merged_from.len(),
        data.config.conversations,
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}
