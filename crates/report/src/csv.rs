//! CSV files of a report: every recorded row written with serde, so the
//! columns are the record's fields, and read back with errors that name the
//! file, the row and the column.
//!
//! Floats are written in their shortest round-trip form, so reading a file
//! back gives the exact values that were written.

use super::ReportError;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::path::Path;

/// Serialises `rows` with an explicit header, so that a file with no rows
/// still names its columns; `file` names it in errors.
///
/// # Errors
/// [`ReportError::Render`] when a row cannot be serialised.
pub fn write<T: Serialize>(
    file: &'static str,
    columns: &[&str],
    rows: impl IntoIterator<Item = T>,
) -> Result<Vec<u8>, ReportError> {
    let mut out = Vec::new();
    write_to(&mut out, file, columns, rows)?;
    Ok(out)
}

/// [`write()`] straight to `out`, a row at a time, so that a file of a
/// hundred thousand rows is never whole in memory.
///
/// # Errors
/// [`ReportError::Render`] when a row cannot be serialised,
/// [`ReportError::Write`] when `out` fails.
pub fn write_to<T: Serialize>(
    out: &mut dyn std::io::Write,
    file: &'static str,
    columns: &[&str],
    rows: impl IntoIterator<Item = T>,
) -> Result<(), ReportError> {
    let fail = |e: csv::Error| {
        let message = e.to_string();
        match e.into_kind() {
            csv::ErrorKind::Io(source) => ReportError::Write {
                path: file.into(),
                source,
            },
            _ => ReportError::Render { file, message },
        }
    };
    let mut writer = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(out);
    writer.write_record(columns).map_err(fail)?;
    for row in rows {
        writer.serialize(&row).map_err(fail)?;
    }
    writer.flush().map_err(|source| ReportError::Write {
        path: file.into(),
        source,
    })
}

/// Reads the CSV file at `path`, whose header must be `columns` (or
/// `columns` without some of those listed in `added_since`, for files
/// written before those columns existed; serde fills in their defaults).
///
/// # Errors
/// [`ReportError`] naming the file, and the row and column when one is bad.
pub fn read<T: DeserializeOwned>(
    path: &Path,
    columns: &[&str],
    added_since: &[&str],
) -> Result<Vec<T>, ReportError> {
    let bytes = std::fs::read(path).map_err(|source| ReportError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse(path, columns, added_since, &bytes)
}

/// [`read`] on bytes already in memory; `path` only names the file in errors.
///
/// # Errors
/// As [`read`].
pub fn parse<T: DeserializeOwned>(
    path: &Path,
    columns: &[&str],
    added_since: &[&str],
    bytes: &[u8],
) -> Result<Vec<T>, ReportError> {
    let mut reader = csv::ReaderBuilder::new().from_reader(bytes);
    let headers = reader
        .headers()
        .map_err(|e| ReportError::Row {
            path: path.to_path_buf(),
            row: 0,
            message: format!("unreadable header: {e}"),
        })?
        .clone();
    // An older file lacks the columns added since; serde fills them in
    // with their defaults.
    // Any of the columns added since may be missing; the rest must be there
    // in order.
    let older = !added_since.is_empty()
        && headers.iter().all(|h| columns.contains(&h))
        && headers.iter().eq(columns
            .iter()
            .copied()
            .filter(|c| !added_since.contains(c) || headers.iter().any(|h| h == *c)));
    if headers.iter().ne(columns.iter().copied()) && !older {
        return Err(ReportError::Columns {
            path: path.to_path_buf(),
            found: headers.iter().collect::<Vec<_>>().join(","),
            expected: columns.join(","),
        });
    }
    let mut rows = Vec::new();
    for (index, record) in reader.records().enumerate() {
        let row = index as u64 + 1;
        let row_error = |message: String| ReportError::Row {
            path: path.to_path_buf(),
            row,
            message,
        };
        let record = record.map_err(|e| row_error(describe_csv_error(&e, columns, None)))?;
        let value = record
            .deserialize::<T>(Some(&headers))
            .map_err(|e| row_error(describe_csv_error(&e, columns, Some(&record))))?;
        rows.push(value);
    }
    Ok(rows)
}

/// A short message naming the column, without csv's own position prefix
/// (the caller names the file and row). csv does not say which column an
/// invalid enum value came from; the column is then found by the value
/// serde quotes.
fn describe_csv_error(
    error: &csv::Error,
    columns: &[&str],
    record: Option<&csv::StringRecord>,
) -> String {
    match error.kind() {
        csv::ErrorKind::Deserialize { err, .. } => {
            let detail = match err.kind() {
                csv::DeserializeErrorKind::Message(message)
                | csv::DeserializeErrorKind::Unsupported(message) => message.clone(),
                other => other.to_string(),
            };
            let quoted = detail.split('`').nth(1).map(str::to_string);
            let detail = detail
                .replace("unknown variant", "invalid value")
                .replace('`', "\"");
            let field = err.field().map(|f| f as usize).or_else(|| {
                let value = quoted?;
                record?.iter().position(|v| v == value)
            });
            match field.and_then(|f| columns.get(f)) {
                Some(column) => format!("column {column}: {detail}"),
                None => detail,
            }
        }
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("{len} fields, expected {expected_len}"),
        _ => error.to_string(),
    }
}
