//! `generate`: write a seeded synthetic dataset and print its statistics.

use crate::cli::GenerateArgs;
use crate::dataset::generate::{generate_each, GenerateError, Mode};
use crate::dataset::{later, rich, Conversation, DatasetStats};
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
/// written beside itself (`.NAME.PID.partial`) and renamed into place at
/// the end, so that a failure leaves no partial file and an existing one
/// untouched; an
/// existing `--out` is kept unless `--force` (the file is replaced, a
/// symbolic link included). A closed pipe on standard
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
            let c = if args.later_probes {
                later::add_later_probes(c, opts.seed, index, args.rich && index % 2 == 1)
            } else {
                c
            };
            index += 1;
            stats.add(&c);
            c.write_line(&mut *out)?;
            Ok::<(), Stop>(())
        })?;
        out.flush()?;
        Ok(())
    };
    let written = match &args.out {
        Some(out) => {
            // Beside --out (same file system, so the rename is atomic),
            // created as --out would be (the umask decides its mode).
            let name = out
                .file_name()
                .map_or_else(|| "dataset".into(), |n| n.to_string_lossy().into_owned());
            let partial = out.with_file_name(format!(".{name}.{}.partial", std::process::id()));
            let cannot = || {
                format!(
                    "cannot write --out {}; check that its directory exists and is writable",
                    out.display()
                )
            };
            // A new file, never one planted at the name (no link followed).
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&partial)
                .with_context(cannot)?;
            let mut buffered = std::io::BufWriter::with_capacity(1 << 16, file);
            let done = write_all(&mut buffered)
                .map_err(|e| match e {
                    Stop::Generate(e) => anyhow::Error::from(e),
                    Stop::Write(e) => anyhow::Error::from(e).context(cannot()),
                })
                .and_then(|()| {
                    buffered
                        .into_inner()
                        .map_err(|e| anyhow::Error::from(e.into_error()).context(cannot()))
                })
                .and_then(|file| {
                    drop(file);
                    std::fs::rename(&partial, out).with_context(cannot)
                });
            if let Err(e) = done {
                let _ = std::fs::remove_file(&partial);
                return Err(e);
            }
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
        "{}{} conversations (seed {}, {}-{} turns{})\n{stats}",
        if args.rich { "rich, " } else { "" },
        opts.conversations,
        opts.seed,
        opts.min_turns,
        opts.max_turns,
        if args.later_probes {
            ", and 4 more for the later probes"
        } else {
            ""
        },
    );
    match written {
        Some(out) => println!("wrote {}: {summary}", out.display()),
        None => eprintln!("{summary}"),
    }
    Ok(ExitCode::SUCCESS)
}
