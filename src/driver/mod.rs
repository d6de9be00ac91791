//! The driver: replays conversations through the systems under test with C
//! concurrent workers and one collector.
