//! The order in which the jobs of several runs start, so that the runs
//! overlap: a run's last conversations (those that hold a connection for
//! a TIMEOUT) no longer leave the workers idle before the next run starts.
//!
//! One rule keeps a run's requests apart from the next run's: a
//! conversation starts its next run only when every system has finished
//! it in this one. The upstreams tell runs apart by the conversation a
//! request belongs to (its run is the conversation's, read when the
//! request arrives), so every request the client is waiting for is taken
//! for its own run, and every system still sees each conversation of a run
//! at about the same time. A gateway's attempt that comes after the client
//! gave up on the turn (a retry past `--request-timeout`) is taken for the
//! run its conversation is in by then, as it was at the end of a whole run
//! before runs overlapped. Within the rule the jobs start in each run's
//! own order ([`crate::job_order`]), earlier runs first.
//!
//! What overlapping changes for a gateway with state of its own (a
//! circuit breaker, a health check): the next run's held conversations
//! start while this run's last ones still hold, so it can see the timeouts
//! of two runs at once.

use std::collections::{HashMap, VecDeque};

/// One conversation of one system in one run: (run, system, conversation).
pub type Job = (u32, usize, usize);

/// What a worker is to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Replay this job.
    Start(Job),
    /// Every job left waits for a conversation still in flight: wait for
    /// one to finish.
    Wait,
    /// Every job has been handed out.
    Done,
}

/// The jobs of every run, handed out under the rule above. Each job moves
/// at most twice (from its run's queue to a conversation's waiting list,
/// then to the released queue), so handing out N jobs costs O(N).
#[derive(Debug)]
pub struct Schedule {
    /// Per run, in run order: its jobs not yet handed out or set aside.
    runs: VecDeque<(u32, VecDeque<(usize, usize)>)>,
    /// Jobs whose conversation has moved on to their run: they go first.
    released: VecDeque<Job>,
    /// Jobs set aside until their conversation moves on to their run.
    waiting: HashMap<usize, VecDeque<Job>>,
    /// Per conversation: the run it is in and the jobs of that run not yet
    /// finished.
    state: HashMap<usize, (u32, usize)>,
    /// Systems per run.
    systems: usize,
    /// The first and the last run.
    first: u32,
    last: u32,
    /// Per run from the first: its jobs not yet finished.
    unfinished: Vec<usize>,
}

impl Schedule {
    /// The jobs of `runs` (consecutive runs, in order, each with its
    /// (system, conversation) jobs in order: every conversation once per
    /// system), for `systems` systems. Every conversation starts in the
    /// first run.
    pub fn new(runs: Vec<(u32, Vec<(usize, usize)>)>, systems: usize) -> Self {
        let first = runs.first().map_or(1, |(run, _)| *run);
        let last = runs.last().map_or(first, |(run, _)| *run);
        let unfinished = runs.iter().map(|(_, jobs)| jobs.len()).collect();
        let state = runs
            .first()
            .into_iter()
            .flat_map(|(_, jobs)| jobs.iter().map(|&(_, c)| (c, (first, systems))))
            .collect();
        Schedule {
            runs: runs
                .into_iter()
                .map(|(run, jobs)| (run, jobs.into()))
                .collect(),
            released: VecDeque::new(),
            waiting: HashMap::new(),
            state,
            systems,
            first,
            last,
            unfinished,
        }
    }

    /// The run conversation `conversation` is in now.
    pub fn run_of(&self, conversation: usize) -> Option<u32> {
        self.state.get(&conversation).map(|&(run, _)| run)
    }

    /// The earliest run with a job not finished (the last run once every
    /// job is).
    pub fn earliest_run(&self) -> u32 {
        let open = self.unfinished.iter().position(|&n| n > 0);
        open.map_or(self.last, |k| self.first + k as u32)
    }

    /// The next job to start, if one may start now: the earliest run's
    /// first job that may start, a released one before the jobs of a later
    /// run.
    pub fn take(&mut self) -> Next {
        loop {
            let queued = self.runs.front().map(|(run, _)| *run);
            match (self.released.front(), queued) {
                (Some(job), Some(run)) if job.0 <= run => {}
                (Some(_), None) => {}
                (_, None) => break,
                (_, Some(run)) => {
                    let Some((system, conversation)) =
                        self.runs.front_mut().and_then(|(_, jobs)| jobs.pop_front())
                    else {
                        self.runs.pop_front();
                        continue;
                    };
                    let job = (run, system, conversation);
                    if self.run_of(conversation) == Some(run) {
                        return Next::Start(job);
                    }
                    self.waiting.entry(conversation).or_default().push_back(job);
                    continue;
                }
            }
            if let Some(job) = self.released.pop_front() {
                return Next::Start(job);
            }
        }
        if self.waiting.is_empty() {
            Next::Done
        } else {
            Next::Wait
        }
    }

    /// Records that `job` finished. When it was the last system to finish
    /// its conversation in its run and a later run follows, the
    /// conversation moves on to it (returned) and that run's jobs set
    /// aside for it are released.
    pub fn finish(&mut self, job: Job) -> Option<u32> {
        let (run, _, conversation) = job;
        let entry = self.state.get_mut(&conversation)?;
        if entry.0 != run || entry.1 == 0 {
            return None;
        }
        entry.1 -= 1;
        if let Some(n) = self.unfinished.get_mut((run - self.first) as usize) {
            *n = n.saturating_sub(1);
        }
        if entry.1 > 0 || run >= self.last {
            return None;
        }
        let next = run + 1;
        *entry = (next, self.systems);
        if let Some(jobs) = self.waiting.get_mut(&conversation) {
            while jobs.front().is_some_and(|j| j.0 == next) {
                self.released.extend(jobs.pop_front());
            }
            if jobs.is_empty() {
                self.waiting.remove(&conversation);
            }
        }
        Some(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(schedule: &mut Schedule) -> Vec<Job> {
        let mut started = Vec::new();
        while let Next::Start(job) = schedule.take() {
            started.push(job);
        }
        started
    }

    /// With one run every job starts at once, in order.
    #[test]
    fn one_run_hands_out_every_job_in_order() {
        let jobs = vec![(1, 0), (0, 0), (1, 1), (0, 1)];
        let mut s = Schedule::new(vec![(1, jobs.clone())], 2);
        let started = drain(&mut s);
        assert_eq!(
            started,
            jobs.iter().map(|&(a, b)| (1, a, b)).collect::<Vec<_>>()
        );
        assert_eq!(s.take(), Next::Done);
    }

    /// A conversation starts its next run only when every system has
    /// finished it; another conversation's next run starts meanwhile.
    #[test]
    fn a_conversation_waits_for_every_system_before_its_next_run() {
        let run = |r| (r, vec![(0, 0), (1, 0), (0, 1), (1, 1)]);
        let mut s = Schedule::new(vec![run(1), run(2)], 2);
        let first = drain(&mut s);
        assert_eq!(first.len(), 4);
        assert!(first.iter().all(|j| j.0 == 1));
        // Run 2's jobs all wait: nothing has finished.
        assert_eq!(s.take(), Next::Wait);
        assert_eq!(s.finish((1, 0, 1)), None, "system 1 still has it");
        assert_eq!(s.take(), Next::Wait);
        assert_eq!(s.finish((1, 1, 1)), Some(2));
        assert_eq!(s.run_of(1), Some(2));
        assert_eq!(s.run_of(0), Some(1));
        // Conversation 1 of run 2 starts while conversation 0 of run 1 is
        // still in flight.
        assert_eq!(drain(&mut s), vec![(2, 0, 1), (2, 1, 1)]);
        assert_eq!(s.take(), Next::Wait);
        assert_eq!(s.earliest_run(), 1);
        s.finish((1, 1, 0));
        assert_eq!(s.finish((1, 0, 0)), Some(2));
        assert_eq!(s.earliest_run(), 2);
        assert_eq!(drain(&mut s), vec![(2, 0, 0), (2, 1, 0)]);
        assert_eq!(s.take(), Next::Done);
        // The last run moves no conversation on.
        assert_eq!(s.finish((2, 0, 0)), None);
        assert_eq!(s.finish((2, 1, 0)), None);
    }

    /// A conversation released into a later run waits for the jobs of the
    /// earlier run not started yet.
    #[test]
    fn an_earlier_run_s_jobs_start_first() {
        let run = |r| (r, vec![(0, 0), (0, 1), (0, 2)]);
        let mut s = Schedule::new(vec![run(1), run(2)], 1);
        assert_eq!(s.take(), Next::Start((1, 0, 0)));
        assert_eq!(s.finish((1, 0, 0)), Some(2));
        assert_eq!(s.take(), Next::Start((1, 0, 1)));
        assert_eq!(s.take(), Next::Start((1, 0, 2)));
        assert_eq!(s.take(), Next::Start((2, 0, 0)));
        assert_eq!(s.take(), Next::Wait);
    }

    /// Three runs: a conversation's third run waits for its second, even
    /// when its jobs were set aside before the second was released.
    #[test]
    fn later_runs_wait_in_turn() {
        let run = |r| (r, vec![(0, 0)]);
        let mut s = Schedule::new(vec![run(1), run(2), run(3)], 1);
        assert_eq!(s.take(), Next::Start((1, 0, 0)));
        assert_eq!(s.take(), Next::Wait);
        assert_eq!(s.finish((1, 0, 0)), Some(2));
        assert_eq!(s.take(), Next::Start((2, 0, 0)));
        assert_eq!(s.take(), Next::Wait);
        assert_eq!(s.finish((2, 0, 0)), Some(3));
        assert_eq!(s.take(), Next::Start((3, 0, 0)));
        assert_eq!(s.take(), Next::Done);
    }
}
