//! The attempt log every upstream writes to.
//!
//! One [`AttemptRecord`] per request an upstream received, recorded when the
//! upstream is done with it (answer sent, or the client went away), so rows
//! appear in completion order. Attempt numbers are handed out on arrival, per
//! (run, system, role, conversation, turn), from 1.

use crate::faults::Role;
use crate::record::AttemptRecord;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// Which turn of which conversation an upstream was asked about: the unit
/// attempts are numbered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnKey<'a> {
    /// Run index, from 1.
    pub run: u32,
    /// The system the upstream belongs to.
    pub system: &'a str,
    /// Primary or fallback.
    pub role: Role,
    /// Conversation id (empty when unrecognised).
    pub conversation: &'a str,
    /// Turn number.
    pub turn: u32,
}

type AttemptKey = (u32, String, Role, String, u32);

fn owned(k: TurnKey<'_>) -> AttemptKey {
    (
        k.run,
        k.system.to_string(),
        k.role,
        k.conversation.to_string(),
        k.turn,
    )
}

#[derive(Debug, Default)]
struct Inner {
    /// Finished attempts, in completion order.
    rows: Vec<AttemptRecord>,
    /// Attempts arrived, per key.
    attempts: HashMap<AttemptKey, u32>,
    /// Attempts still being served (a held connection, an answer being
    /// streamed), by id, with when they arrived.
    pending: HashMap<u64, (AttemptRecord, std::time::Instant)>,
    next_id: u64,
    /// What scripted attempts carried and what was done, in arrival order.
    details: Vec<AttemptDetail>,
    /// What survived of the client's request, per recognised attempt.
    survivals: Vec<SurvivalRow>,
    /// Requests refused by a dialect's validation, in arrival order.
    rejections: Vec<RejectionRow>,
}

/// What of the client's request reached an upstream in one attempt
/// ([`crate::dialect::survival`]), beside the attempt's row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SurvivalRow {
    /// Run index, from 1.
    pub run: u32,
    /// The system the upstream belongs to.
    pub system: String,
    /// Primary or fallback.
    pub role: Role,
    /// Conversation id.
    pub conversation: String,
    /// Turn number.
    pub turn: u32,
    /// Attempt number for the turn at this upstream, from 1.
    pub attempt: u32,
    /// The dialect the upstream was called in.
    pub dialect: crate::dialect::Dialect,
    /// System messages, tool results and user turns: sent and reached.
    pub survival: crate::dialect::Survival,
    /// Whether the message that states the anchor reached the upstream.
    pub anchor: bool,
}

/// A request an upstream refused as invalid in its dialect (a 400 with
/// the API's own body): nothing of it can be attributed to a turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RejectionRow {
    /// Run index, from 1.
    pub run: u32,
    /// The system the upstream belongs to.
    pub system: String,
    /// Primary or fallback.
    pub role: Role,
    /// The dialect whose rules were broken.
    pub dialect: crate::dialect::Dialect,
    /// The API's message.
    pub message: String,
}

/// What a case script read from one attempt and what it did, beside the
/// attempt's row (attempts.csv has no columns for it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttemptDetail {
    /// Run index, from 1.
    pub run: u32,
    /// The system the upstream belongs to.
    pub system: String,
    /// Primary or fallback.
    pub role: Role,
    /// Conversation id.
    pub conversation: String,
    /// Turn number.
    pub turn: u32,
    /// Attempt number for the turn at this upstream, from 1.
    pub attempt: u32,
    /// Whether the request ended with an assistant message (a prefill).
    pub prefill: bool,
    /// The `max_tokens` received, if any.
    pub max_tokens: Option<serde_json::Value>,
    /// Whether the request switched thinking off (`enable_thinking: false`).
    pub thinking_disabled: bool,
    /// What the upstream did, in words (`answer`, `error 429`, `reset`,
    /// `answer, cut after 40 chunks`, ...).
    pub act: String,
    /// Whether the answer carried reasoning text.
    pub reasoning: bool,
}

/// An attempt that arrived and is not finished yet (see [`AttemptLog::begin`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PendingId(u64);

/// Shared, append-only log of upstream attempts. Clones share the same log.
#[derive(Debug, Clone, Default)]
pub struct AttemptLog {
    inner: Arc<Mutex<Inner>>,
}

impl AttemptLog {
    /// An empty log.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave the rows half-written
        // (every operation is one push or one insert), so poison is ignored.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The next attempt number for (run, system, role, conversation, turn),
    /// from 1. Called once per request, on arrival.
    pub fn next_attempt(&self, key: TurnKey<'_>) -> u32 {
        let mut inner = self.lock();
        let n = inner.attempts.entry(owned(key)).or_insert(0);
        *n += 1;
        *n
    }

    /// Attempts that have arrived for (run, system, role, conversation,
    /// turn), including those still in progress (a held TIMEOUT is recorded
    /// only when it ends, but counted here from its arrival).
    pub fn arrived(&self, key: TurnKey<'_>) -> u32 {
        self.lock().attempts.get(&owned(key)).copied().unwrap_or(0)
    }

    /// Appends one finished row.
    pub fn record(&self, row: AttemptRecord) {
        self.lock().rows.push(row);
    }

    /// Registers an attempt that arrived at `arrived` and is being served;
    /// until [`AttemptLog::finish`], snapshots show it as in flight.
    pub fn begin(&self, row: AttemptRecord, arrived: std::time::Instant) -> PendingId {
        let mut inner = self.lock();
        let id = inner.next_id;
        inner.next_id += 1;
        inner.pending.insert(id, (row, arrived));
        PendingId(id)
    }

    /// Changes the row of an attempt still being served.
    pub fn update(&self, id: PendingId, change: impl FnOnce(&mut AttemptRecord)) {
        if let Some((row, _)) = self.lock().pending.get_mut(&id.0) {
            change(row);
        }
    }

    /// Finishes an attempt: `change` completes its row, which moves to the
    /// finished rows.
    pub fn finish(&self, id: PendingId, change: impl FnOnce(&mut AttemptRecord)) {
        let mut inner = self.lock();
        if let Some((mut row, _)) = inner.pending.remove(&id.0) {
            change(&mut row);
            inner.rows.push(row);
        }
    }

    /// Waits until every attempt that arrived for `key` is recorded, or
    /// `max_wait` passes; returns whether none is left in flight. The
    /// per-key form of [`AttemptLog::settle`], for a check that must not
    /// wait for other conversations' held connections.
    pub async fn settle_key(&self, key: TurnKey<'_>, max_wait: std::time::Duration) -> bool {
        let give_up = tokio::time::Instant::now() + max_wait;
        let key = owned(key);
        loop {
            let pending = self.lock().pending.values().any(|(row, _)| {
                (
                    row.run,
                    row.system.as_str(),
                    row.role,
                    row.conversation.as_str(),
                    row.turn,
                ) == (key.0, key.1.as_str(), key.2, key.3.as_str(), key.4)
            });
            if !pending {
                return true;
            }
            if tokio::time::Instant::now() >= give_up {
                return false;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }

    /// A copy of every attempt so far: the finished ones in the order they
    /// finished, then those still in flight (status empty, client not gone,
    /// duration so far), in arrival order. Every attempt that arrived is in
    /// it, so a connection still held when a run ends is not lost.
    pub fn snapshot(&self) -> Vec<AttemptRecord> {
        let inner = self.lock();
        let mut pending: Vec<(u64, AttemptRecord)> = inner
            .pending
            .iter()
            .map(|(id, (row, arrived))| {
                let mut row = row.clone();
                row.duration_ms = arrived.elapsed().as_secs_f64() * 1000.0;
                (*id, row)
            })
            .collect();
        pending.sort_by_key(|(id, _)| *id);
        let mut rows = inner.rows.clone();
        rows.extend(pending.into_iter().map(|(_, row)| row));
        rows
    }

    /// Attempts that have arrived but are not finished: held TIMEOUTs
    /// whose client has not gone away, answers still being written.
    pub fn in_flight(&self) -> usize {
        self.lock().pending.len()
    }

    /// Waits until every attempt that arrived is recorded, or `max_wait`
    /// passes; returns whether none is left in flight. A gateway that gave
    /// up on a held TIMEOUT closes the connection, but the upstream may
    /// notice a moment after the gateway's answer reached the driver: a
    /// snapshot taken at once would miss that attempt.
    pub async fn settle(&self, max_wait: std::time::Duration) -> bool {
        let give_up = tokio::time::Instant::now() + max_wait;
        while self.in_flight() > 0 {
            if tokio::time::Instant::now() >= give_up {
                return false;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        true
    }

    /// Keeps what a scripted attempt carried and what was done.
    pub fn note_detail(&self, detail: AttemptDetail) {
        self.lock().details.push(detail);
    }

    /// Every detail noted so far, in arrival order.
    pub fn details(&self) -> Vec<AttemptDetail> {
        self.lock().details.clone()
    }

    /// Keeps what survived of one attempt's request.
    pub fn note_survival(&self, row: SurvivalRow) {
        self.lock().survivals.push(row);
    }

    /// Every survival noted so far, in arrival order.
    pub fn survivals(&self) -> Vec<SurvivalRow> {
        self.lock().survivals.clone()
    }

    /// Keeps a request refused by a dialect's validation.
    pub fn note_rejection(&self, row: RejectionRow) {
        self.lock().rejections.push(row);
    }

    /// Every rejection noted so far, in arrival order.
    pub fn rejections(&self) -> Vec<RejectionRow> {
        self.lock().rejections.clone()
    }

    /// Number of finished rows so far.
    pub fn len(&self) -> usize {
        self.lock().rows.len()
    }

    /// Whether nothing has been recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Copies of the rows of one (run, system, conversation, turn), both
    /// roles, ordered by arrival.
    pub fn for_turn(
        &self,
        run: u32,
        system: &str,
        conversation: &str,
        turn: u32,
    ) -> Vec<AttemptRecord> {
        let mut rows: Vec<AttemptRecord> = self
            .lock()
            .rows
            .iter()
            .filter(|r| {
                r.run == run
                    && r.system == system
                    && r.conversation == conversation
                    && r.turn == turn
            })
            .cloned()
            .collect();
        rows.sort_by(|a, b| a.arrived_ms.total_cmp(&b.arrived_ms));
        rows
    }

    /// Writes every row as CSV (a header, then one line per attempt).
    ///
    /// # Errors
    /// When the writer fails.
    pub fn write_csv<W: std::io::Write>(&self, out: W) -> csv::Result<()> {
        let mut w = csv::Writer::from_writer(out);
        for row in self.snapshot() {
            w.serialize(row)?;
        }
        w.flush()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn settle_waits_for_attempts_still_in_flight() {
        let log = AttemptLog::new();
        let id = log.begin(
            row(1, "c1", 7, Role::Primary, 0.0),
            std::time::Instant::now(),
        );
        assert_eq!(log.in_flight(), 1);
        // A snapshot taken now still shows the held attempt, in flight.
        let rows = log.snapshot();
        assert_eq!(rows.len(), 1);
        assert!(!rows[0].client_gave_up);
        assert!(!log.settle(std::time::Duration::from_millis(30)).await);
        let later = log.clone();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            later.finish(id, |r| r.client_gave_up = true);
        });
        assert!(log.settle(std::time::Duration::from_secs(5)).await);
        assert_eq!(log.in_flight(), 0);
        assert_eq!(log.len(), 1);
        assert!(log.snapshot()[0].client_gave_up);
    }

    #[tokio::test]
    async fn settle_key_waits_only_for_its_own_key() {
        let log = AttemptLog::new();
        let key = |c| TurnKey {
            run: 1,
            system: "history",
            role: Role::Primary,
            conversation: c,
            turn: 7,
        };
        let now = std::time::Instant::now();
        let c1 = log.begin(row(1, "c1", 7, Role::Primary, 0.0), now);
        let _c2 = log.begin(row(1, "c2", 7, Role::Primary, 0.0), now);
        // c2 is held elsewhere; c1 finishes a moment later.
        let writer = log.clone();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            writer.finish(c1, |_| {});
        });
        assert!(
            log.settle_key(key("c1"), std::time::Duration::from_secs(5))
                .await
        );
        assert_eq!(log.len(), 1);
        assert!(
            !log.settle_key(key("c2"), std::time::Duration::from_millis(30))
                .await
        );
    }

    fn row(run: u32, conversation: &str, turn: u32, role: Role, arrived_ms: f64) -> AttemptRecord {
        crate::record::fixture::attempt(run, "history", role, conversation, turn, arrived_ms)
    }

    #[test]
    fn attempts_count_per_key() {
        let log = AttemptLog::new();
        assert_eq!(
            log.next_attempt(TurnKey {
                run: 1,
                system: "s",
                role: Role::Primary,
                conversation: "c1",
                turn: 3
            }),
            1
        );
        assert_eq!(
            log.next_attempt(TurnKey {
                run: 1,
                system: "s",
                role: Role::Primary,
                conversation: "c1",
                turn: 3
            }),
            2
        );
        assert_eq!(
            log.next_attempt(TurnKey {
                run: 1,
                system: "s",
                role: Role::Fallback,
                conversation: "c1",
                turn: 3
            }),
            1
        );
        assert_eq!(
            log.next_attempt(TurnKey {
                run: 2,
                system: "s",
                role: Role::Primary,
                conversation: "c1",
                turn: 3
            }),
            1
        );
        assert_eq!(
            log.next_attempt(TurnKey {
                run: 1,
                system: "s",
                role: Role::Primary,
                conversation: "c1",
                turn: 4
            }),
            1
        );
    }

    #[test]
    fn rows_for_one_turn() {
        let log = AttemptLog::new();
        assert!(log.is_empty());
        log.record(row(1, "c1", 9, Role::Fallback, 20.0));
        log.record(row(1, "c1", 9, Role::Primary, 10.0));
        log.record(row(1, "c1", 8, Role::Primary, 5.0));
        log.record(row(2, "c1", 9, Role::Primary, 30.0));
        assert_eq!(log.len(), 4);
        let rows = log.for_turn(1, "history", "c1", 9);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].role, Role::Primary);
        assert_eq!(log.for_turn(1, "stateless", "c1", 9).len(), 0);
    }

    #[test]
    fn csv_has_header_and_rows() {
        let log = AttemptLog::new();
        log.record(row(1, "c1", 9, Role::Primary, 10.0));
        let mut out = Vec::new();
        log.write_csv(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let mut lines = text.lines();
        assert!(lines
            .next()
            .unwrap()
            .starts_with("run,system,role,conversation,turn,attempt"));
        assert!(lines
            .next()
            .unwrap()
            .starts_with("1,history,primary,c1,9,1,"));
    }
}
