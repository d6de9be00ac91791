//! What a gateway's process costs, read from Linux's `/proc` when the
//! harness knows its PID: the CPU time of the process and every process
//! below it (a gateway with worker processes is charged for all of them,
//! and for the workers it has reaped), and their resident memory now and
//! at its peak (`VmHWM`, reset when the measurement starts where the
//! kernel allows it, else since each process started; summed over the
//! tree, so pages a forked worker shares are counted once per process).
//! Elsewhere, or for a PID that is gone, the figures are absent, never
//! zero.

use std::path::Path;

/// Clock ticks per second of `/proc/<pid>/stat`'s CPU times: Linux's
/// `USER_HZ`, which the kernel's ABI fixes at 100.
const TICKS_PER_SECOND: f64 = 100.0;

/// A process and its descendants, read at one moment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    /// User plus system CPU time so far, in seconds.
    pub cpu_seconds: f64,
    /// Resident memory now, in KiB, summed over the processes.
    pub rss_kib: u64,
    /// Peak resident memory of each process, summed, in KiB.
    pub peak_rss_kib: u64,
}

/// Reads `pid` and its descendants; `None` when `/proc` has no such
/// process (gone, or not Linux).
pub fn read(pid: u32) -> Option<Reading> {
    read_under(Path::new("/proc"), pid)
}

fn read_under(proc: &Path, pid: u32) -> Option<Reading> {
    let root = stat(proc, pid)?;
    let mut tree = vec![(pid, root)];
    let all = all_stats(proc);
    // Breadth-first over the parent links; bounded by the processes listed.
    let mut i = 0;
    while i < tree.len() && tree.len() <= all.len() + 1 {
        let parent = tree[i].0;
        for (child, s) in &all {
            if s.ppid == parent && !tree.iter().any(|(p, _)| p == child) {
                tree.push((*child, *s));
            }
        }
        i += 1;
    }
    let mut reading = Reading {
        cpu_seconds: 0.0,
        rss_kib: 0,
        peak_rss_kib: 0,
    };
    // The root's reaped children: a worker that ended between two readings
    // keeps its CPU in the count.
    reading.cpu_seconds += (root.cutime + root.cstime) as f64 / TICKS_PER_SECOND;
    for (p, s) in &tree {
        reading.cpu_seconds += (s.utime + s.stime) as f64 / TICKS_PER_SECOND;
        let status =
            std::fs::read_to_string(proc.join(p.to_string()).join("status")).unwrap_or_default();
        reading.rss_kib += status_kib(&status, "VmRSS:").unwrap_or(0);
        reading.peak_rss_kib += status_kib(&status, "VmHWM:").unwrap_or(0);
    }
    Some(reading)
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Stat {
    ppid: u32,
    utime: u64,
    stime: u64,
    cutime: u64,
    cstime: u64,
}

/// Resets the peak resident memory (`VmHWM`) of `pid` and every process
/// below it to what each holds now (`echo 5 > /proc/PID/clear_refs`), so
/// that the peak read later is the measurement's. Whether every reset was
/// allowed.
pub fn reset_peak(pid: u32) -> bool {
    let proc = Path::new("/proc");
    if stat(proc, pid).is_none() {
        return false;
    }
    let all = all_stats(proc);
    let mut tree = vec![pid];
    let mut i = 0;
    while i < tree.len() && tree.len() <= all.len() + 1 {
        let parent = tree[i];
        tree.extend(
            all.iter()
                .filter(|(child, s)| s.ppid == parent && !tree.contains(child))
                .map(|(child, _)| *child)
                .collect::<Vec<_>>(),
        );
        i += 1;
    }
    tree.iter()
        .all(|p| std::fs::write(proc.join(p.to_string()).join("clear_refs"), b"5").is_ok())
}

fn stat(proc: &Path, pid: u32) -> Option<Stat> {
    parse_stat(&std::fs::read_to_string(proc.join(pid.to_string()).join("stat")).ok()?)
}

fn all_stats(proc: &Path) -> Vec<(u32, Stat)> {
    let Ok(entries) = std::fs::read_dir(proc) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| Some((pid, stat(proc, pid)?)))
        .collect()
}

/// `/proc/<pid>/stat`: the command name is in parentheses and may hold
/// spaces or parentheses itself, so fields are counted after the last `)`;
/// ppid is field 4, utime 14, stime 15, cutime 16 and cstime 17 (proc(5)).
fn parse_stat(text: &str) -> Option<Stat> {
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // fields[0] is field 3 (state).
    Some(Stat {
        ppid: fields.get(1)?.parse().ok()?,
        utime: fields.get(11)?.parse().ok()?,
        stime: fields.get(12)?.parse().ok()?,
        cutime: fields.get(13)?.parse().ok()?,
        cstime: fields.get(14)?.parse().ok()?,
    })
}

/// A `Name:   1234 kB` line of `/proc/<pid>/status`, in KiB.
fn status_kib(status: &str, name: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_after_the_last_parenthesis() {
        let line = "4242 (node (worker) x) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 11 0 123 456 789";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                ppid: 17,
                utime: 250,
                stime: 75,
                cutime: 0,
                cstime: 0,
            })
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn status_lines_give_kib() {
        let status = "Name:\tnode\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n";
        assert_eq!(status_kib(status, "VmHWM:"), Some(204_800));
        assert_eq!(status_kib(status, "VmRSS:"), Some(102_400));
        assert_eq!(status_kib(status, "VmSwap:"), None);
    }

    /// A fake /proc: a parent, its child and a grandchild are summed; an
    /// unrelated process is not; a missing PID is no reading.
    #[test]
    fn a_process_tree_is_summed_and_strangers_are_not() {
        let dir = std::env::temp_dir().join(format!("cb-overhead-proc-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let write = |pid: u32, ppid: u32, utime: u64, rss: u64, hwm: u64| {
            let d = dir.join(pid.to_string());
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(
                d.join("stat"),
                format!("{pid} (p) S {ppid} 0 0 0 -1 0 0 0 0 0 {utime} 50 7 3 20 0 1 0 1 2 3"),
            )
            .unwrap();
            std::fs::write(
                d.join("status"),
                format!("VmHWM:\t{hwm} kB\nVmRSS:\t{rss} kB\n"),
            )
            .unwrap();
        };
        write(10, 1, 100, 1000, 2000);
        write(11, 10, 200, 500, 600);
        write(12, 11, 300, 10, 20);
        write(13, 1, 9999, 9999, 9999);
        let r = read_under(&dir, 10).unwrap();
        // Each process's own time, and the root's reaped children (7 + 3).
        assert!(
            (r.cpu_seconds - (600.0 + 150.0 + 10.0) / 100.0).abs() < 1e-9,
            "{r:?}"
        );
        assert_eq!(r.rss_kib, 1510);
        assert_eq!(r.peak_rss_kib, 2620);
        assert_eq!(read_under(&dir, 99), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn this_process_can_be_read_on_linux() {
        if cfg!(target_os = "linux") {
            let r = read(std::process::id()).unwrap();
            assert!(r.peak_rss_kib >= r.rss_kib && r.rss_kib > 0, "{r:?}");
        }
    }

    /// A child that grows 64 MiB and frees it has a peak above its
    /// resident memory; after the reset, its peak is what it holds now.
    #[test]
    fn the_peak_is_reset_to_what_a_process_holds_now() {
        if !cfg!(target_os = "linux") {
            return;
        }
        let spawned = std::process::Command::new("python3")
            .args([
                "-c",
                "x = bytearray(64 << 20); del x; print('grown', flush=True); import sys; sys.stdin.read()",
            ])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn();
        let Ok(mut child) = spawned else {
            return; // no python3 here: nothing to grow a peak with
        };
        // Ready when it says so: the peak has risen and been freed.
        let mut line = String::new();
        let stdout = child.stdout.take().unwrap();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line).unwrap();
        assert_eq!(line.trim(), "grown");
        let pid = child.id();
        let before = read(pid).unwrap();
        assert!(
            before.peak_rss_kib > before.rss_kib + 32 * 1024,
            "{before:?}"
        );
        assert!(reset_peak(pid), "our own child's peak can be reset");
        let after = read(pid).unwrap();
        assert!(
            after.peak_rss_kib + 32 * 1024 < before.peak_rss_kib,
            "{before:?} -> {after:?}"
        );
        drop(child.stdin.take());
        let _ = child.wait();
    }
}
