//! Headless Chromium for the tests that look at a page as a person would:
//! found on the machine (`.ci/run` installs it), started with the flags
//! that keep it off the network, bounded in time. Without a browser the
//! test is skipped with a notice, unless `CONTINUITY_BENCH_REQUIRE_BROWSER`
//! is set (`.ci/run` sets it after installing one), where it fails: so
//! `cargo test` on a machine with only the Rust toolchain still passes, and
//! CI cannot pass without looking.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Longest a browser may take for one page.
const BROWSER_DEADLINE: Duration = Duration::from_secs(120);

/// The set variable that makes a missing browser a failure.
pub const REQUIRE_BROWSER: &str = "CONTINUITY_BENCH_REQUIRE_BROWSER";

/// The browser to use: `CONTINUITY_BENCH_CHROMIUM`, else the first of the
/// usual names on PATH. `None`, with a notice, when there is none and none
/// is required; a panic naming the install step when one is required.
pub fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CONTINUITY_BENCH_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in [
            "chromium",
            "chromium-browser",
            "google-chrome",
            "chrome-headless-shell",
        ] {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    let message = "no headless Chromium found (chromium, chromium-browser, google-chrome or \
                   chrome-headless-shell on PATH, or CONTINUITY_BENCH_CHROMIUM); run the \
                   browser install step of .ci/run (apt-get install chromium)";
    if std::env::var_os(REQUIRE_BROWSER).is_some() {
        panic!("{message}; {REQUIRE_BROWSER} is set, so the browser test cannot be skipped");
    }
    eprintln!("SKIPPED browser check: {message}");
    None
}

/// Runs `browser` headless on `page` with `extra` flags and returns its
/// standard output, killing it past [`BROWSER_DEADLINE`].
fn run(browser: &Path, page: &Path, extra: &[String]) -> String {
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", browser.display()));
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut text).unwrap();
        text
    });
    let deadline = Instant::now() + BROWSER_DEADLINE;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(
                status.success(),
                "{} exited with {status}",
                browser.display()
            );
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!(
                "{} did not finish within {BROWSER_DEADLINE:?}",
                browser.display()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    reader.join().unwrap()
}

/// The page's DOM after it loaded (`--dump-dom`).
pub fn dump_dom(browser: &Path, page: &Path) -> String {
    run(browser, page, &["--dump-dom".to_string()])
}

/// A screenshot of the page, `width` × `height`, written to `png`.
pub fn screenshot(browser: &Path, page: &Path, png: &Path, width: u32, height: u32) {
    run(
        browser,
        page,
        &[
            format!("--screenshot={}", png.display()),
            format!("--window-size={width},{height}"),
        ],
    );
    assert!(png.is_file(), "no screenshot written to {}", png.display());
}

/// The share of the pixels of a PNG that are not (near) white: 0 for a
/// blank page.
pub fn inked_share(png: &Path) -> f64 {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let pixels = &buf[..info.buffer_size()];
    let total = pixels.len() / channels;
    let inked = pixels
        .chunks(channels)
        .filter(|p| p.iter().take(3.min(channels)).any(|&c| c < 235))
        .count();
    inked as f64 / total as f64
}

/// Counts pixels close to `rgb` (within 12 per channel).
pub fn pixels_near(png: &Path, rgb: [u8; 3]) -> usize {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    if channels < 3 {
        return 0;
    }
    buf[..info.buffer_size()]
        .chunks(channels)
        .filter(|p| (0..3).all(|i| p[i].abs_diff(rgb[i]) <= 12))
        .count()
}
