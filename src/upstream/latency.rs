//! The latency model of the simulated upstreams.

/// A named latency profile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyProfile {
    /// Name ("instant", "fast", "realistic").
    pub name: &'static str,
}
