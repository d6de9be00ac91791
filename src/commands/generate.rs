//! `generate`: write a seeded synthetic dataset and print its statistics.

use crate::cli::GenerateArgs;
use crate::dataset::generate::generate;
use std::process::ExitCode;

/// `generate`: validates the options, writes the dataset and prints its
/// statistics.
pub fn generate_command(args: &GenerateArgs) -> anyhow::Result<ExitCode> {
    let opts = crate::config::generate_options(args)?;
    let dataset = generate(&opts);
    dataset.write(&args.out)?;
    println!(
        "wrote {} (seed {}, {} conversations, {}-{} turns)",
        args.out.display(),
        opts.seed,
        opts.conversations,
        opts.min_turns,
        opts.max_turns
    );
    println!("{}", dataset.stats());
    Ok(ExitCode::SUCCESS)
}
