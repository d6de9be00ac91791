//! The systems file (`--systems FILE`, TOML): every system under test
//! described once, its name, a base URL or a built-in reference proxy, its
//! headers (secrets as `env:VAR`), its upstream ports, the model id the
//! driver asks for and notes, so that `run`, `semantics`, `canary` and
//! `grade` need no long flag lists. The file is translated into the same
//! options the flags give (`--gateway`, `--upstream-ports`, `--header`,
//! `--no-builtin`) and validated by the one validator
//! ([`super::parse_gateways`]), so a file and the flags cannot disagree on
//! what is valid.
//!
//! ```toml
//! model = "continuity-sim"          # optional: what the driver asks for
//!
//! [[system]]
//! name = "history"
//! builtin = "history"               # a reference proxy: stateless or history
//!
//! [[system]]
//! name = "litellm"
//! url = "http://127.0.0.1:4000"     # an OpenAI-compatible gateway
//! upstream_ports = [9001, 9002]     # optional: its primary and fallback
//! headers = { Authorization = "env:LITELLM_AUTH" }
//! notes = "LiteLLM 1.106.12, examples/gateways/litellm/config.yaml"
//! ```
//!
//! `canary --systems FILE` probes the file's one gateway: its `url` is the
//! OpenRouter-compatible endpoint, `key_env` names the variable holding its
//! key, and `model` (author/slug), when set, the model.

use crate::cli::SystemOptions;
use crate::proxy::ProxyMode;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Largest systems file read (a description of a few systems, not data).
const MAX_FILE_BYTES: u64 = 256 * 1024;

/// Why a systems file is refused; every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum SystemsFileError {
    /// The file cannot be read.
    #[error("cannot read --systems {path}: {source}; pass the path of a TOML systems file (examples/systems/builtin.toml is one)")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is too large to be a systems file.
    #[error("--systems {path} is {bytes} bytes, more than a systems file holds ({MAX_FILE_BYTES} at most); pass the systems file, not a data file")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        bytes: u64,
    },
    /// Not TOML of the expected shape.
    #[error("--systems {path} is not a valid systems file: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What the TOML reader said (it names the line and key).
        message: String,
    },
    /// A system entry that cannot be used.
    #[error("--systems {path}, system {system:?}: {message}")]
    System {
        /// The file.
        path: PathBuf,
        /// The system's name.
        system: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A problem with the file as a whole.
    #[error("--systems {path}: {message}")]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong and how to fix it.
        message: String,
    },
}

/// The file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    /// The model id the driver asks every system for.
    model: Option<String>,
    /// How long to wait for each gateway's first answer ("30s").
    gateway_wait: Option<String>,
    /// The API the driver speaks to every system ("chat" or "responses").
    api: Option<String>,
    /// The systems.
    #[serde(default)]
    system: Vec<RawSystem>,
}

/// One `[[system]]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSystem {
    name: String,
    builtin: Option<String>,
    url: Option<String>,
    upstream_ports: Option<[u16; 2]>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    model: Option<String>,
    #[serde(default)]
    notes: String,
    #[serde(default)]
    control: bool,
    /// `canary`: the variable holding the endpoint's API key.
    key_env: Option<String>,
}

/// What a system is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SystemKind {
    /// A reference proxy of the harness.
    Builtin(ProxyMode),
    /// An external gateway at this base URL.
    Gateway(String),
}

/// One system of a systems file, as the reports describe it (the values of
/// its headers are not kept here: they go to the validator and no further).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemEntry {
    /// Its name in reports.
    pub name: String,
    /// A reference proxy or a gateway URL.
    pub kind: SystemKind,
    /// The names of the headers it is sent (never their values).
    pub header_names: Vec<String>,
    /// Free text shown beside its results.
    pub notes: String,
    /// A negative control: a system expected to fail (the `stateless`
    /// reference drops the history by construction), left out of
    /// `grade --fail-under`.
    pub control: bool,
}

/// A systems file, read and translated into the systems flags.
#[derive(Debug, Clone)]
pub struct SystemsFile {
    /// The file it was read from.
    pub path: PathBuf,
    /// Its systems, in file order.
    pub systems: Vec<SystemEntry>,
    /// The same systems as the flags would give them.
    pub options: SystemOptions,
}

impl SystemsFile {
    /// Reads and checks `path`; `base` supplies what the file leaves out
    /// (the response cap, the fallback dialect, and the model id and
    /// gateway wait when the file sets none).
    ///
    /// # Errors
    /// A [`SystemsFileError`] naming the file, the system and the fix.
    pub fn read(path: &Path, base: &SystemOptions) -> Result<Self, SystemsFileError> {
        Self::parse(path, &read_bounded(path)?, base)
    }

    /// Parses `text` as the systems file at `path`.
    ///
    /// # Errors
    /// As [`SystemsFile::read`].
    pub fn parse(path: &Path, text: &str, base: &SystemOptions) -> Result<Self, SystemsFileError> {
        let raw: RawFile = toml::from_str(text).map_err(|e| SystemsFileError::Parse {
            path: path.to_path_buf(),
            message: e.message().to_string() + &line_of(text, e.span()),
        })?;
        let file_error = |message: String| SystemsFileError::File {
            path: path.to_path_buf(),
            message,
        };
        if raw.system.is_empty() {
            return Err(file_error(
                "it lists no system; add a [[system]] table with a name and a builtin or url"
                    .into(),
            ));
        }
        let mut options = base.clone();
        options.gateways.clear();
        options.upstream_ports.clear();
        options.headers.clear();
        options.gateway_models.clear();
        options.systems = None;
        if let Some(wait) = &raw.gateway_wait {
            options.gateway_wait = humantime::parse_duration(wait).map_err(|e| {
                file_error(format!(
                    "gateway_wait = {wait:?} is not a duration ({e}); write e.g. \"30s\""
                ))
            })?;
        }
        options.api = match raw.api.as_deref() {
            None => options.api,
            Some("chat") => crate::cli::ApiArg::Chat,
            Some("responses") => crate::cli::ApiArg::Responses,
            Some(other) => {
                return Err(file_error(format!(
                "api = {other:?} is not an API the driver speaks; write \"chat\" or \"responses\""
            )))
            }
        };
        // (system, model, a gateway's) for each system that names a model.
        let mut models: Vec<(String, String, bool)> = Vec::new();
        let mut builtins = Vec::new();
        let mut systems = Vec::new();
        for s in &raw.system {
            let entry = entry(s).map_err(|message| SystemsFileError::System {
                path: path.to_path_buf(),
                system: s.name.clone(),
                message,
            })?;
            if systems.iter().any(|e: &SystemEntry| e.name == entry.name) {
                return Err(file_error(format!(
                    "two systems are named {:?}; give each its own name",
                    entry.name
                )));
            }
            if let Some(model) = &s.model {
                let gateway = matches!(entry.kind, SystemKind::Gateway(_));
                models.push((s.name.clone(), model.clone(), gateway));
            }
            match &entry.kind {
                SystemKind::Builtin(mode) => builtins.push(*mode),
                SystemKind::Gateway(url) => {
                    options.gateways.push(format!("{}={url}", s.name));
                    if let Some([p, f]) = s.upstream_ports {
                        options.upstream_ports.push(format!("{}={p},{f}", s.name));
                    }
                    for (header, value) in &s.headers {
                        options.headers.push(format!("{}:{header}={value}", s.name));
                    }
                }
            }
            systems.push(entry);
        }
        // The run's model: the file's, else the one every system names
        // (as before per-gateway models), else a reference proxy's. A
        // gateway whose own model differs is asked for it alone
        // (`--gateway-model`); a reference proxy is asked for the run's.
        let shared = models
            .first()
            .filter(|(_, first, _)| models.iter().all(|(_, m, _)| m == first))
            .map(|(_, m, _)| m.clone());
        let builtin_model = models
            .iter()
            .find(|(_, _, g)| !g)
            .map(|(_, m, _)| m.clone());
        if let Some(model) = raw.model.clone().or(shared).or(builtin_model) {
            options.model = model;
        }
        for (name, model, gateway) in &models {
            if *model == options.model {
                continue;
            }
            if !gateway {
                return Err(file_error(format!(
                    "system {name:?} asks for model {model:?} and the run for {:?}; a reference proxy is asked for the run's model, so give it the same (or remove its `model`)",
                    options.model
                )));
            }
            options.gateway_models.push(format!("{name}={model}"));
        }
        match builtins.len() {
            0 => options.no_builtin = true,
            2 => options.no_builtin = false,
            _ => {
                return Err(file_error(
                    "it lists one reference proxy; the built-in stateless and history run as a pair (CLO is their difference), so list both or neither".into(),
                ))
            }
        }
        Ok(SystemsFile {
            path: path.to_path_buf(),
            systems,
            options,
        })
    }

    /// The entry named `name`.
    pub fn get(&self, name: &str) -> Option<&SystemEntry> {
        self.systems.iter().find(|s| s.name == name)
    }
}

/// `canary`'s arguments with the endpoint of the one gateway of the
/// systems file at `path` (its url, `key_env` and `model`).
///
/// # Errors
/// A [`SystemsFileError`] when the file cannot be read or does not list
/// exactly one gateway.
pub fn canary_args(
    path: &Path,
    args: &crate::cli::CanaryRunArgs,
) -> Result<crate::cli::CanaryRunArgs, SystemsFileError> {
    let text = read_bounded(path)?;
    let raw: RawFile = toml::from_str(&text).map_err(|e| SystemsFileError::Parse {
        path: path.to_path_buf(),
        message: e.message().to_string() + &line_of(&text, e.span()),
    })?;
    let gateways: Vec<&RawSystem> = raw.system.iter().filter(|s| s.url.is_some()).collect();
    let [system] = gateways[..] else {
        let names: Vec<&str> = gateways.iter().map(|s| s.name.as_str()).collect();
        return Err(SystemsFileError::File {
            path: path.to_path_buf(),
            message: format!(
                "canary probes one endpoint, and the file lists {} gateway(s) ({}); keep one system with a url",
                names.len(),
                names.join(", ")
            ),
        });
    };
    let mut out = args.clone();
    out.systems = None;
    out.endpoint = system.url.clone();
    if let Some(var) = &system.key_env {
        out.key_env = var.clone();
    }
    if let Some(model) = system.model.as_ref().or(raw.model.as_ref()) {
        out.model = model.clone();
    }
    Ok(out)
}

/// The file's text, refused past [`MAX_FILE_BYTES`].
fn read_bounded(path: &Path) -> Result<String, SystemsFileError> {
    let io = |source| SystemsFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let bytes = std::fs::metadata(path).map_err(io)?.len();
    if bytes > MAX_FILE_BYTES {
        return Err(SystemsFileError::TooLarge {
            path: path.to_path_buf(),
            bytes,
        });
    }
    std::fs::read_to_string(path).map_err(io)
}

/// Checks one `[[system]]` and describes it.
fn entry(s: &RawSystem) -> Result<SystemEntry, String> {
    let valid_name = !s.name.is_empty()
        && s.name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid_name {
        return Err(
            "a name is letters, digits, '-' and '_' (it names report rows and anchors)".into(),
        );
    }
    let kind = match (&s.builtin, &s.url) {
        (Some(_), Some(_)) => {
            return Err(
                "give either builtin (a reference proxy) or url (a gateway), not both".into(),
            )
        }
        (None, None) => {
            return Err(
                "give builtin = \"stateless\" or \"history\", or url = \"http://HOST:PORT\"".into(),
            )
        }
        (Some(mode), None) => {
            let mode = ProxyMode::ALL
                .into_iter()
                .find(|m| m.as_str() == mode)
                .ok_or_else(|| {
                    format!("builtin = {mode:?} is no reference proxy; write \"stateless\" or \"history\"")
                })?;
            if mode.as_str() != s.name {
                return Err(format!(
                    "a reference proxy keeps its own name: name = {:?}",
                    mode.as_str()
                ));
            }
            if s.upstream_ports.is_some() || !s.headers.is_empty() {
                return Err("upstream_ports and headers are for gateways (url = ...); a reference proxy has its own".into());
            }
            SystemKind::Builtin(mode)
        }
        (None, Some(url)) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!(
                    "url = {:?} is not an http:// or https:// base URL (without /v1)",
                    cb_base::url::display_url(url)
                ));
            }
            SystemKind::Gateway(url.clone())
        }
    };
    for (header, value) in &s.headers {
        if header.contains(['=', ':']) || header.trim().is_empty() {
            return Err(format!(
                "header {header:?} is not a header name; use letters, digits and dashes"
            ));
        }
        if value.is_empty() {
            return Err(format!(
                "header {header} has an empty value; write the value, or env:VAR to read it from the environment"
            ));
        }
    }
    Ok(SystemEntry {
        name: s.name.clone(),
        kind,
        header_names: s.headers.keys().cloned().collect(),
        notes: s.notes.trim().to_string(),
        control: s.control,
    })
}

/// " (line N)" for a TOML error's span, when it has one.
fn line_of(text: &str, span: Option<std::ops::Range<usize>>) -> String {
    match span {
        Some(span) => {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            format!(" (line {line})")
        }
        None => String::new(),
    }
}

#[cfg(test)]
#[path = "systems_file_tests.rs"]
mod tests;
