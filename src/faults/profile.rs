//! Fault profiles: parsing and validating the TOML files.

use std::path::Path;

/// Why a profile was rejected.
#[derive(Debug, thiserror::Error)]
pub enum FaultError {
    /// Placeholder.
    #[error("cannot read fault profile {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// A validated fault profile.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultProfile {
    /// The profile's name.
    pub name: String,
}

impl FaultProfile {
    /// Loads and validates a profile file.
    pub fn load(_path: &Path) -> Result<FaultProfile, FaultError> {
        todo!()
    }
}
