//! JSON files of a report: pretty-printed with a final newline, and read
//! back with errors that name the file.

use super::ReportError;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::path::Path;

/// `value` as pretty JSON with a final newline; `file` names it in errors.
///
/// # Errors
/// [`ReportError::Render`] when `value` cannot be serialised.
pub fn pretty<T: Serialize + ?Sized>(
    file: &'static str,
    value: &T,
) -> Result<Vec<u8>, ReportError> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|e| ReportError::Render {
        file,
        message: e.to_string(),
    })?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Reads and parses the JSON file at `path`.
///
/// # Errors
/// [`ReportError::Read`] when it cannot be read, [`ReportError::Json`] when
/// it is not the expected JSON.
pub fn read<T: DeserializeOwned>(path: &Path) -> Result<T, ReportError> {
    let bytes = std::fs::read(path).map_err(|source| ReportError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_slice(&bytes).map_err(|source| ReportError::Json {
        path: path.to_path_buf(),
        source,
    })
}
