//! The attempt log every upstream writes to.
//!
//! One [`AttemptRecord`] per request an upstream received, recorded when the
//! upstream is done with it (answer sent, or the client went away), so rows
//! appear in completion order. Attempt numbers are handed out on arrival, per
//! (run, system, role, conversation, turn), from 1.

use cb_base::record::AttemptRecord;
use cb_faults::Role;
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

/// A [`TurnKey`] with its system and conversation replaced by their
/// numbers in [`Names`]: no allocation per key, about 20 bytes each, where
/// two owned strings per key would cost the attempt numbering of a
/// 10,000-conversation run some 30 MB.
type AttemptKey = (u32, u32, Role, u32, u32);

/// Numbers for the system names and conversation ids seen, each string
/// kept once.
#[derive(Debug, Default)]
struct Names(HashMap<String, u32>);

impl Names {
    /// The number of `name`, given on first sight.
    fn intern(&mut self, name: &str) -> u32 {
        if let Some(&n) = self.0.get(name) {
            return n;
        }
        let n = u32::try_from(self.0.len()).unwrap_or(u32::MAX);
        self.0.insert(name.to_string(), n);
        n
    }

    /// The key of `k`, numbering new names.
    fn key(&mut self, k: TurnKey<'_>) -> AttemptKey {
        (
            k.run,
            self.intern(k.system),
            k.role,
            self.intern(k.conversation),
            k.turn,
        )
    }

    /// The key of `k` if both its names were seen.
    fn known(&self, k: TurnKey<'_>) -> Option<AttemptKey> {
        Some((
            k.run,
            *self.0.get(k.system)?,
            k.role,
            *self.0.get(k.conversation)?,
            k.turn,
        ))
    }
}

/// Where finished attempts go.
#[derive(Default)]
enum Keep {
    /// Into [`Inner::rows`], for the run's report (the default).
    #[default]
    All,
    /// Written out as they finish (`None`: counted only), never kept: a
    /// long-lived `upstreams` holds only what is in flight.
    Stream(Option<Box<csv::Writer<Box<dyn std::io::Write + Send>>>>),
}

impl std::fmt::Debug for Keep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Keep::All => f.write_str("All"),
            Keep::Stream(sink) => write!(f, "Stream(to a file: {})", sink.is_some()),
        }
    }
}

#[derive(Debug, Default)]
struct Inner {
    /// Where finished attempts go.
    keep: Keep,
    /// Finished attempts streamed out (see [`Keep::Stream`]).
    streamed: usize,
    /// The first error writing them, if any.
    sink_error: Option<String>,
    /// Finished attempts, in completion order.
    rows: Vec<AttemptRecord>,
    /// Attempts arrived, per key.
    attempts: HashMap<AttemptKey, u32>,
    /// The numbers of the names in the keys.
    names: Names,
    /// Attempts still being served (a held connection, an answer being
    /// streamed), by id, with when they arrived.
    pending: HashMap<u64, (AttemptRecord, tokio::time::Instant)>,
    next_id: u64,
    /// What scripted attempts carried and what was done, in arrival order.
    details: Vec<AttemptDetail>,
    /// What survived of the client's request, per recognised attempt at a fallback.
    survivals: Vec<SurvivalRow>,
    /// Requests refused by a dialect's validation, in arrival order.
    rejections: Vec<RejectionRow>,
}

/// What of the client's request reached an upstream in one attempt
/// ([`cb_dialect::survival()`]), beside the attempt's row.
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
    pub dialect: cb_dialect::Dialect,
    /// System messages, tool results and user turns: sent and reached.
    pub survival: cb_dialect::Survival,
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
    pub dialect: cb_dialect::Dialect,
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
    /// What the upstream billed for its answer (prompt and the tokens of
    /// the text it sent); `None` when it sent no answer.
    pub billed: Option<cb_wire::openai::Usage>,
}

/// Which attempt: its turn and its number there, the keys an attempt's
/// row and its detail share.
#[derive(Debug, Clone, Copy)]
pub struct AttemptOf<'a> {
    /// The turn.
    pub turn: TurnKey<'a>,
    /// Attempt number.
    pub attempt: u32,
}

/// An attempt that arrived and is not finished yet (see [`AttemptLog::begin`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PendingId(u64);

/// Shared, append-only log of upstream attempts. Clones share the same log.
#[derive(Debug, Clone, Default)]
pub struct AttemptLog {
    inner: Arc<Mutex<Inner>>,
}

impl Inner {
    /// Keeps or streams one finished row.
    fn push(&mut self, row: AttemptRecord) {
        match &mut self.keep {
            Keep::All => self.rows.push(row),
            Keep::Stream(sink) => {
                self.streamed += 1;
                if let Some(w) = sink {
                    if let Err(e) = w.serialize(&row) {
                        self.sink_error.get_or_insert(e.to_string());
                    }
                }
            }
        }
    }
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
        let key = inner.names.key(key);
        let n = inner.attempts.entry(key).or_insert(0);
        *n += 1;
        *n
    }

    /// Attempts that have arrived for (run, system, role, conversation,
    /// turn), including those still in progress (a held TIMEOUT is recorded
    /// only when it ends, but counted here from its arrival).
    pub fn arrived(&self, key: TurnKey<'_>) -> u32 {
        let inner = self.lock();
        inner
            .names
            .known(key)
            .and_then(|k| inner.attempts.get(&k).copied())
            .unwrap_or(0)
    }

    /// Makes room for `rows` finished rows at once (a run knows about how
    /// many requests it will send). Room not yet written costs no memory
    /// (the pages are untouched), and a log that never outgrows it never
    /// copies its rows into a buffer twice as large, which would hold both
    /// for a moment: at 10,000 conversations about 190,000 rows, 46 MiB.
    pub fn reserve(&self, rows: usize) {
        let mut inner = self.lock();
        let more = rows.saturating_sub(inner.rows.len());
        // Room is an optimisation: when the allocator refuses it, the rows
        // grow as they come.
        let _ = inner.rows.try_reserve(more);
    }

    /// Appends one finished row.
    pub fn record(&self, row: AttemptRecord) {
        self.lock().push(row);
    }

    /// From now on, finished rows are written to `sink` as CSV as they
    /// finish (or only counted, with `None`) instead of kept: memory then
    /// follows the attempts in flight, not those served. Details,
    /// survivals and rejections (for a run's report) are not kept either.
    pub fn stream_to(&self, sink: Option<Box<dyn std::io::Write + Send>>) {
        self.lock().keep = Keep::Stream(sink.map(|w| Box::new(csv::Writer::from_writer(w))));
    }

    /// Ends streaming: attempts still in flight are written as they stand
    /// (their duration so far), and the sink is flushed.
    ///
    /// # Errors
    /// The first error writing a row or flushing.
    pub fn end_stream(&self) -> Result<(), String> {
        let mut inner = self.lock();
        let mut pending: Vec<(u64, (AttemptRecord, tokio::time::Instant))> =
            inner.pending.drain().collect();
        pending.sort_by_key(|(id, _)| *id);
        for (_, (mut row, arrived)) in pending {
            row.duration_ms = arrived.elapsed().as_secs_f64() * 1000.0;
            inner.push(row);
        }
        if let Keep::Stream(Some(w)) = &mut inner.keep {
            if let Err(e) = w.flush() {
                inner.sink_error.get_or_insert(e.to_string());
            }
        }
        inner.sink_error.clone().map_or(Ok(()), Err)
    }

    /// Registers an attempt that arrived at `arrived` and is being served;
    /// until [`AttemptLog::finish`], snapshots show it as in flight.
    pub fn begin(&self, row: AttemptRecord, arrived: tokio::time::Instant) -> PendingId {
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
            inner.push(row);
        }
    }

    /// Waits until every attempt that arrived for `key` is recorded, or
    /// `max_wait` passes; returns whether none is left in flight. The
    /// per-key form of [`AttemptLog::settle`], for a check that must not
    /// wait for other conversations' held connections.
    pub async fn settle_key(&self, key: TurnKey<'_>, max_wait: std::time::Duration) -> bool {
        let give_up = tokio::time::Instant::now() + max_wait;
        loop {
            let pending = self.lock().pending.values().any(|(row, _)| {
                (
                    row.run,
                    row.system.as_str(),
                    row.role,
                    row.conversation.as_str(),
                    row.turn,
                ) == (key.run, key.system, key.role, key.conversation, key.turn)
            });
            if !pending {
                return true;
            }
            if tokio::time::Instant::now() >= give_up {
                return false;
            }
            // A poll of the log, bounded by `give_up`: the condition decides, not the sleep.
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

    /// Every attempt so far, ordered as [`AttemptLog::snapshot`] orders
    /// them, moved out of the log rather than copied: for the end of a
    /// run, when a copy would double the largest thing it holds. The log
    /// is left empty, attempt numbering included (a later request would
    /// start again from attempt 1), and an attempt still in flight is
    /// taken as it stands (its end is then not recorded).
    pub fn take_all(&self) -> Vec<AttemptRecord> {
        let mut inner = self.lock();
        let mut pending: Vec<(u64, (AttemptRecord, tokio::time::Instant))> =
            inner.pending.drain().collect();
        pending.sort_by_key(|(id, _)| *id);
        let mut rows = std::mem::take(&mut inner.rows);
        rows.extend(pending.into_iter().map(|(_, (mut row, arrived))| {
            row.duration_ms = arrived.elapsed().as_secs_f64() * 1000.0;
            row
        }));
        inner.attempts = HashMap::new();
        inner.names = Names::default();
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
            // A poll of the log, bounded by `give_up`: the condition decides, not the sleep.
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        true
    }

    /// Keeps what a scripted attempt carried and what was done.
    pub fn note_detail(&self, detail: AttemptDetail) {
        let mut inner = self.lock();
        if matches!(inner.keep, Keep::All) {
            inner.details.push(detail);
        }
    }

    /// Notes what attempt `key` billed on its detail (the last one noted
    /// for it); nothing when no detail was noted (not a case script).
    pub fn note_billed(&self, key: AttemptOf<'_>, billed: cb_wire::openai::Usage) {
        let mut inner = self.lock();
        let turn = key.turn;
        if let Some(detail) = inner.details.iter_mut().rev().find(|d| {
            d.run == turn.run
                && d.system == turn.system
                && d.role == turn.role
                && d.conversation == turn.conversation
                && d.turn == turn.turn
                && d.attempt == key.attempt
        }) {
            detail.billed = Some(billed);
        }
    }

    /// Every detail noted so far, in arrival order.
    pub fn details(&self) -> Vec<AttemptDetail> {
        self.lock().details.clone()
    }

    /// Keeps what survived of one attempt's request.
    pub fn note_survival(&self, row: SurvivalRow) {
        let mut inner = self.lock();
        if matches!(inner.keep, Keep::All) {
            inner.survivals.push(row);
        }
    }

    /// Every survival noted so far, in arrival order.
    pub fn survivals(&self) -> Vec<SurvivalRow> {
        self.lock().survivals.clone()
    }

    /// Every survival noted so far, moved out of the log (as
    /// [`AttemptLog::take_all`], for the end of a run).
    pub fn take_survivals(&self) -> Vec<SurvivalRow> {
        std::mem::take(&mut self.lock().survivals)
    }

    /// Keeps a request refused by a dialect's validation.
    pub fn note_rejection(&self, row: RejectionRow) {
        let mut inner = self.lock();
        if matches!(inner.keep, Keep::All) {
            inner.rejections.push(row);
        }
    }

    /// Every rejection noted so far, in arrival order.
    pub fn rejections(&self) -> Vec<RejectionRow> {
        self.lock().rejections.clone()
    }

    /// Number of finished rows so far (kept or streamed).
    pub fn len(&self) -> usize {
        let inner = self.lock();
        inner.rows.len() + inner.streamed
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

    #[tokio::test(start_paused = true)]
    async fn settle_waits_for_attempts_still_in_flight() {
        let log = AttemptLog::new();
        let id = log.begin(
            row(1, "c1", 7, Role::Primary, 0.0),
            tokio::time::Instant::now(),
        );
        assert_eq!(log.in_flight(), 1);
        // A snapshot taken now still shows the held attempt, in flight.
        let rows = log.snapshot();
        assert_eq!(rows.len(), 1);
        assert!(!rows[0].client_gave_up);
        assert!(!log.settle(std::time::Duration::from_millis(30)).await);
        let later = log.clone();
        tokio::spawn(async move {
            // Paused clock: the finish comes after the 30 ms settle gave up and before a longer
            // one does, an ordering on virtual time.
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            later.finish(id, |r| r.client_gave_up = true);
        });
        assert!(log.settle(std::time::Duration::from_secs(5)).await);
        assert_eq!(log.in_flight(), 0);
        assert_eq!(log.len(), 1);
        assert!(log.snapshot()[0].client_gave_up);
    }

    #[tokio::test(start_paused = true)]
    async fn settle_key_waits_only_for_its_own_key() {
        let log = AttemptLog::new();
        let key = |c| TurnKey {
            run: 1,
            system: "history",
            role: Role::Primary,
            conversation: c,
            turn: 7,
        };
        let now = tokio::time::Instant::now();
        let c1 = log.begin(row(1, "c1", 7, Role::Primary, 0.0), now);
        let _c2 = log.begin(row(1, "c2", 7, Role::Primary, 0.0), now);
        // c2 is held elsewhere; c1 finishes a moment later.
        let writer = log.clone();
        tokio::spawn(async move {
            // Paused clock: c1 finishes 50 virtual ms later, whatever the load.
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
        cb_testkit::record::attempt(run, "history", role, conversation, turn, arrived_ms)
    }

    #[test]
    fn attempts_count_per_key() {
        let log = AttemptLog::new();
        let at = |run, role, turn| TurnKey {
            run,
            system: "s",
            role,
            conversation: "c1",
            turn,
        };
        assert_eq!(log.next_attempt(at(1, Role::Primary, 3)), 1);
        assert_eq!(log.next_attempt(at(1, Role::Primary, 3)), 2);
        assert_eq!(log.next_attempt(at(1, Role::Fallback, 3)), 1);
        assert_eq!(log.next_attempt(at(2, Role::Primary, 3)), 1);
        assert_eq!(log.next_attempt(at(1, Role::Primary, 4)), 1);
        let key = |system, conversation| TurnKey {
            run: 1,
            system,
            role: Role::Primary,
            conversation,
            turn: 3,
        };
        assert_eq!(log.arrived(key("s", "c1")), 2);
        // Names never seen, or seen only in another place of the key.
        assert_eq!(log.arrived(key("s", "c9")), 0);
        assert_eq!(log.arrived(key("c1", "s")), 0);
    }

    #[test]
    fn take_all_moves_every_attempt_out_in_snapshot_order() {
        let log = AttemptLog::new();
        let key = TurnKey {
            run: 1,
            system: "history",
            role: Role::Primary,
            conversation: "c1",
            turn: 9,
        };
        assert_eq!(log.next_attempt(key), 1);
        log.record(row(1, "c1", 9, Role::Fallback, 20.0));
        let now = tokio::time::Instant::now();
        let held = log.begin(row(1, "c2", 9, Role::Primary, 30.0), now);
        log.record(row(1, "c1", 8, Role::Primary, 5.0));
        let snapshot = log.snapshot();
        let taken = log.take_all();
        assert_eq!((taken.len(), snapshot.len()), (3, 3));
        for (a, b) in taken.iter().zip(&snapshot) {
            assert_eq!(
                (a.conversation.as_str(), a.turn),
                (b.conversation.as_str(), b.turn)
            );
        }
        // The held attempt is taken as it stands, last; the log is empty.
        assert_eq!(taken[2].conversation, "c2");
        assert!(log.is_empty());
        assert_eq!(log.in_flight(), 0);
        assert!(log.snapshot().is_empty());
        log.finish(held, |r| r.client_gave_up = true);
        assert!(log.is_empty());
        assert_eq!(log.next_attempt(key), 1);
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

    /// A shared buffer the streaming log writes into.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_streaming_log_writes_rows_as_they_finish_and_keeps_none() {
        let log = AttemptLog::new();
        let out = Shared::default();
        log.stream_to(Some(Box::new(out.clone())));
        for turn in 1..=1000 {
            log.record(row(1, "c1", turn, Role::Primary, f64::from(turn)));
        }
        let held = log.begin(
            row(1, "c2", 3, Role::Primary, 0.0),
            tokio::time::Instant::now(),
        );
        assert_eq!(log.len(), 1000);
        assert!(log.snapshot().len() <= 1, "finished rows are not kept");
        log.note_survival(SurvivalRow {
            run: 1,
            system: "history".into(),
            role: Role::Fallback,
            conversation: "c1".into(),
            turn: 1,
            attempt: 1,
            dialect: cb_dialect::Dialect::Openai,
            survival: cb_dialect::Survival::default(),
            anchor: true,
        });
        assert!(log.survivals().is_empty());
        log.end_stream().unwrap();
        let _ = held;
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        // A header, the 1000 finished rows, and the one still in flight.
        assert_eq!(lines.len(), 1002, "{}", &text[..200]);
        assert!(lines[0].starts_with("run,system,role,conversation,turn,attempt"));
        assert!(lines[1001].starts_with("1,history,primary,c2,3,"));
        assert_eq!(log.len(), 1001);
        // Counted only: nothing written, nothing kept.
        let counted = AttemptLog::new();
        counted.stream_to(None);
        counted.record(row(1, "c1", 1, Role::Primary, 1.0));
        assert_eq!((counted.len(), counted.snapshot().len()), (1, 0));
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
