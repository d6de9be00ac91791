//! Ports for servers a test must name before they start (an external
//! gateway is configured with its upstream ports first).
//!
//! Binding `127.0.0.1:0` and dropping the listener hands the port back to
//! the kernel, which gives it out again to the next `:0` bind or outgoing
//! connection: two calls can return the same port, and a busy suite trips
//! over it. These come instead from a counter below the kernel's ephemeral
//! range (which `:0` binds and outgoing connections draw from), so no port
//! is handed out twice in one test process and none collides with the
//! kernel's own choices; each is checked to bind before it is returned.

use std::net::TcpListener;
use std::sync::atomic::{AtomicU32, Ordering};

/// The first port handed out, and the bound of the range (below 32768,
/// where Linux's ephemeral range starts by default).
const FIRST: u32 = 20_000;
const END: u32 = 32_000;

/// The next port to try: spread by process id, so that two test binaries
/// run at once by hand start far apart.
static NEXT: AtomicU32 = AtomicU32::new(0);

/// A port on 127.0.0.1 that was free a moment ago and that no other call
/// in this process returned.
///
/// # Panics
/// When every port of the range is taken.
pub fn free_port() -> u16 {
    let span = END - FIRST;
    let offset = (std::process::id() * 97) % span;
    for _ in 0..span {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let port = FIRST + (offset + n) % span;
        let port = u16::try_from(port).expect("the range is below 65536");
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port between {FIRST} and {END} on 127.0.0.1");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_port_is_handed_out_twice() {
        let ports: Vec<u16> = (0..200).map(|_| free_port()).collect();
        let mut unique = ports.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), ports.len());
        assert!(ports
            .iter()
            .all(|p| u32::from(*p) >= FIRST && u32::from(*p) < END));
    }
}
