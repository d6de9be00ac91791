//! JSONL reading and writing of datasets.

use super::Dataset;
use std::path::Path;

/// Why a dataset could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    /// Placeholder.
    #[error("cannot read dataset {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

impl Dataset {
    /// Loads a JSONL dataset.
    pub fn load(_path: &Path) -> Result<Dataset, DatasetError> {
        todo!()
    }

    /// The JSONL text, one conversation a line.
    pub fn to_jsonl(&self) -> String {
        todo!()
    }
}
