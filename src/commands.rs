//! One function per subcommand: validate the arguments into a typed
//! configuration, call the library, print the outcome.

use crate::cli::{Command, GenerateArgs};
use crate::dataset::generate::{generate, GenerateOptions};
use std::process::ExitCode;

/// Runs one subcommand.
///
/// # Errors
/// Whatever stops the subcommand.
pub async fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Run(_args) => todo!("run"),
        Command::Generate(args) => generate_command(&args),
        Command::Upstreams(_args) => todo!("upstreams"),
        Command::Proxy(_args) => todo!("proxy"),
        Command::Report(_args) => todo!("report"),
    }
}

/// `generate`: validates the options, writes the dataset and prints its
/// statistics.
fn generate_command(args: &GenerateArgs) -> anyhow::Result<ExitCode> {
    let opts = GenerateOptions {
        seed: args.seed,
        conversations: args.conversations,
        min_turns: args.min_turns,
        max_turns: args.max_turns,
    };
    opts.validate()?;
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
