//! `generate`: write a seeded synthetic dataset and print its statistics.

use crate::cli::GenerateArgs;
use crate::dataset::generate::{generate_each, GenerateError, Mode};
use crate::dataset::{rich, Conversation, DatasetStats};
use anyhow::Context as _;
use std::io::Write;
use std::process::ExitCode;

/// Why writing stopped: the generator, or the output.
#[derive(Debug, thiserror::Error)]
enum Stop {
    #[error(transparent)]
    Generate(#[from] GenerateError),
    #[error(transparent)]
    Write(#[from] std::io::Error),
}

/// `generate`: validates the options, writes the dataset (to `--out`, or to
/// standard output) one conversation at a time as it is built, so that a
/// large one is never held whole, and prints its statistics. `--out` is
/// written beside itself and renamed into place at the end, so that a
/// failure leaves no partial file and an existing one untouched; an
/// existing `--out` is kept unless `--force`. A closed pipe on standard
/// output (`| head -1`) ends the command quietly.
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
    let mode = Mode::for_size(opts.conversations);
    let mut stats = DatasetStats::empty();
    let mut index = 0usize;
    let mut write_all = |out: &mut dyn Write| -> Result<(), Stop> {
        generate_each(&opts, mode, |c: Conversation| {
            let c = if args.rich {
                rich::enrich_one(c, opts.seed, index)
            } else {
                c
            };
            index += 1;
            stats.add(&c);
            serde_json::to_writer(&mut *out, &c).map_err(std::io::Error::from)?;
            out.write_all(b"\n")?;
            Ok::<(), Stop>(())
        })?;
        out.flush()?;
        Ok(())
    };
    let written = match &args.out {
        Some(out) => {
            let dir = match out.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => std::path::Path::new("."),
            };
            let file = tempfile::NamedTempFile::new_in(dir)
                .map_err(|e| std::io::Error::new(e.kind(), e.kind().to_string()))
                .with_context(|| {
                    format!(
                        "cannot write --out {}; check that its directory exists and is writable",
                        out.display()
                    )
                })?;
            let mut buffered = std::io::BufWriter::with_capacity(1 << 16, file);
            write_all(&mut buffered).map_err(|e| match e {
                Stop::Generate(e) => anyhow::Error::from(e),
                Stop::Write(e) => {
                    anyhow::Error::from(e).context(format!("cannot write --out {}", out.display()))
                }
            })?;
            let file = buffered
                .into_inner()
                .map_err(|e| e.into_error())
                .with_context(|| format!("cannot write --out {}", out.display()))?;
            file.persist(out)
                .map_err(|e| e.error)
                .with_context(|| format!("cannot write --out {}", out.display()))?;
            Some(out)
        }
        None => {
            let stdout = std::io::stdout();
            let mut lock = std::io::BufWriter::new(stdout.lock());
            match write_all(&mut lock) {
                Err(Stop::Write(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                    return Ok(ExitCode::SUCCESS)
                }
                Err(Stop::Write(e)) => {
                    return Err(e).context("cannot write the dataset to standard output")
                }
                Err(Stop::Generate(e)) => return Err(e.into()),
                Ok(()) => None,
            }
        }
    };
    let summary = format!(
        "{}{} conversations (seed {}, {}-{} turns)\n{stats}",
        if args.rich { "rich, " } else { "" },
        opts.conversations,
        opts.seed,
        opts.min_turns,
        opts.max_turns,
    );
    match written {
        Some(out) => println!("wrote {}: {summary}", out.display()),
        None => eprintln!("{summary}"),
    }
    Ok(ExitCode::SUCCESS)
}
