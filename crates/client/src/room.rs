//! The room, shared by every exchange in flight, for large response bodies:
//! what keeps the harness's memory bounded when many systems (or many
//! conversations of one) send huge bodies at once, whatever the concurrency.
//!
//! A body is read into memory up to [`SMALL_BODY`] freely. Past that it
//! first reserves room for everything it may still grow to (its cap, at most
//! the whole room) and reads nothing more until it has; the reservation is
//! given back when the exchange has been parsed. The bodies held then stay
//! under `concurrency x SMALL_BODY + ROOM`, and a reader never holds part of
//! the room while it waits for more, so readers cannot block each other for
//! good. Honest chat answers are far below [`SMALL_BODY`] and never wait;
//! a wait only delays readers of large bodies, and counts in their latency.

use tokio::sync::{Semaphore, SemaphorePermit};

/// Bytes of a response body read before it counts as large.
pub(crate) const SMALL_BODY: u64 = 256 * 1024;

/// The room, in KiB: 64 MiB, sixteen bodies at the default 4 MiB cap.
const ROOM_KIB: u32 = 64 * 1024;

static ROOM: Semaphore = Semaphore::const_new(ROOM_KIB as usize);

/// Room reserved for one large body; given back when dropped.
pub(crate) type Room = SemaphorePermit<'static>;

/// The KiB a body that may grow to `cap` bytes reserves.
fn kib_for(cap: u64) -> u32 {
    u32::try_from(cap.div_ceil(1024))
        .unwrap_or(u32::MAX)
        .min(ROOM_KIB)
}

/// Waits until there is room for a body that may grow to `cap` bytes.
pub(crate) async fn reserve_large(cap: u64) -> Option<Room> {
    ROOM.acquire_many(kib_for(cap)).await.ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_reservation_is_the_cap_at_most_the_whole_room() {
        assert_eq!(kib_for(4 * 1024 * 1024), 4096);
        assert_eq!(kib_for(1), 1);
        assert_eq!(kib_for(u64::MAX), ROOM_KIB);
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_room_makes_the_next_large_body_wait_until_one_is_done() {
        // The whole room for one body (a cap larger than the room)...
        let whole = reserve_large(u64::MAX).await.unwrap();
        let waiting = tokio::spawn(reserve_large(1024 * 1024));
        // Paused clock: virtual time moves only once the spawned task is parked on the room, so
        // it has tried and is waiting.
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            !waiting.is_finished(),
            "no room while the first body holds it"
        );
        // ...given back when that exchange is done.
        drop(whole);
        let next = tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .unwrap()
            .unwrap();
        assert!(next.is_some());
    }
}
