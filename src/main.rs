//! Binary entry point: parse the command line, run it in the library, map the
//! outcome to an exit code. Everything else lives in the library so tests can
//! call it in process. The error printed at the end is redacted like every
//! other output: it may quote a reply of a system under test.

use clap::Parser;
use std::process::ExitCode;

/// mimalloc rather than the system allocator: a run at thousands of
/// conversations allocates a connection's buffers on one thread and frees
/// them on another, which leaves glibc's per-thread arenas holding far more
/// than the live heap. It is built without transparent huge pages
/// (`no_thp`): with them (mimalloc asks for them with `madvise`) 8,000
/// requests in flight held 503,380 KB of RSS, without them (the same
/// binary with `MIMALLOC_ALLOW_THP=0`) 352,604 KB
/// (`scripts/scale-memory --max-in-flight 8000`). `--features system-alloc`
/// keeps the system allocator, for a heap profiler such as heaptrack.
#[cfg(not(feature = "system-alloc"))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // A panic's message can quote what a peer sent (slicing a string
    // quotes it): printed redacted and escaped like every other line, not
    // raw by the default hook; with its backtrace when RUST_BACKTRACE asks
    // for one, as the default hook does.
    std::panic::set_hook(Box::new(|info| {
        let thread = std::thread::current();
        let name = thread.name().unwrap_or("<unnamed>");
        let backtrace = std::backtrace::Backtrace::capture();
        match backtrace.status() {
            std::backtrace::BacktraceStatus::Captured => {
                continuity_bench::secret::eprintln!("thread '{name}' {info}\n{backtrace}");
            }
            _ => continuity_bench::secret::eprintln!("thread '{name}' {info}"),
        }
    }));
    let cli = continuity_bench::cli::Cli::parse();
    match continuity_bench::run(cli) {
        Ok(code) => code,
        Err(err) => {
            // Redacted, and escaped for the terminal: the error can quote
            // what a gateway sent.
            continuity_bench::secret::eprintln!(
                "error: {}",
                continuity_bench::describe_error(&err)
            );
            ExitCode::from(2)
        }
    }
}
