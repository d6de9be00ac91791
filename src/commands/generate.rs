//! `generate`: write a seeded synthetic dataset and print its statistics.

use crate::cli::GenerateArgs;
use crate::dataset::generate::try_generate;
use anyhow::Context as _;
use std::io::Write as _;
use std::process::ExitCode;

/// `generate`: validates the options, writes the dataset (to `--out`, or to
/// standard output) and prints its statistics. An existing `--out` is kept
/// unless `--force`; a closed pipe on standard output (`| head -1`) ends the
/// command quietly.
pub fn generate_command(args: &GenerateArgs) -> anyhow::Result<ExitCode> {
    let opts = crate::config::generate_options(args)?;
    if let Some(out) = &args.out {
        if out.exists() && !args.force {
            anyhow::bail!(
                "--out {} exists; choose another file, or pass --force to replace it",
                out.display()
            );
        }
    }
    let mut dataset = try_generate(&opts)?;
    if args.rich {
        dataset = crate::dataset::rich::enrich(dataset, opts.seed);
    }
    let summary = format!(
        "{}{} conversations (seed {}, {}-{} turns)\n{}",
        if args.rich { "rich, " } else { "" },
        opts.conversations,
        opts.seed,
        opts.min_turns,
        opts.max_turns,
        dataset.stats()
    );
    match &args.out {
        Some(out) => {
            dataset.write(out)?;
            println!("wrote {}: {summary}", out.display());
        }
        None => {
            let stdout = std::io::stdout();
            let mut lock = std::io::BufWriter::new(stdout.lock());
            let written = dataset.write_jsonl(&mut lock).and_then(|()| lock.flush());
            match written {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                    return Ok(ExitCode::SUCCESS)
                }
                other => other.context("cannot write the dataset to standard output")?,
            }
            eprintln!("{summary}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
