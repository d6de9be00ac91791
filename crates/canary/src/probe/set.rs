//! The probe set as data, so that a user can replace it (`--probes FILE`)
//! and the roleplay continuation can stand for their own traffic: a
//! versioned file, TOML or JSON, checked in full before the first probe.
//! The built-in set ([`ProbeSet::builtin`]) is the compiled-in prompts and
//! schema of [`super`], version [`super::PROBE_SET_VERSION`], and stays the
//! default. The language probe's prompts are the rotation's and are not
//! replaced.
//!
//! ```toml
//! version = "my-traffic/3"
//! [roleplay]
//! system = "You are ..."
//! user = "..."
//! [schema]
//! user = "Describe ... as a JSON object"
//! schema = { type = "object", properties = { ... }, required = [...] }
//! ```
//!
//! The simulated endpoint recognises the built-in roleplay prompt only: a
//! replaced roleplay probe is answered there as plain text, and its
//! filtering route then filters nothing (pass `--control` accordingly).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Largest probe-set file read.
pub const MAX_FILE_BYTES: u64 = 256 * 1024;

/// The roleplay probe's messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoleplayProbe {
    /// The system message.
    pub system: String,
    /// The user's message.
    pub user: String,
}

/// The schema probe's message and schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchemaProbe {
    /// The user's message.
    pub user: String,
    /// The JSON schema the reply must validate against (an object schema).
    pub schema: Value,
}

/// A probe set: what the roleplay and schema probes send.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeSet {
    /// The set's version, recorded in every report, so that two reports
    /// compare only when they asked the same things.
    pub version: String,
    /// The roleplay probe.
    pub roleplay: RoleplayProbe,
    /// The schema probe.
    pub schema: SchemaProbe,
}

/// Why a probe-set file cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("the probe set {path} cannot be used: {problem}; fix the file (see the README's canary section for its shape), or drop --probes to use the built-in set")]
pub struct ProbeSetError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong.
    pub problem: String,
}

impl ProbeSet {
    /// The built-in set, the same content as the compiled-in constants.
    pub fn builtin() -> Self {
        ProbeSet {
            version: super::PROBE_SET_VERSION.to_string(),
            roleplay: RoleplayProbe {
                system: super::ROLEPLAY_SYSTEM.to_string(),
                user: super::ROLEPLAY_USER.to_string(),
            },
            schema: SchemaProbe {
                user: super::SCHEMA_USER.to_string(),
                schema: super::city_schema(),
            },
        }
    }

    /// Reads and checks a probe-set file (`.json` is JSON, anything else
    /// TOML).
    ///
    /// # Errors
    /// [`ProbeSetError`] naming the file and the problem.
    pub fn load(path: &Path) -> Result<Self, ProbeSetError> {
        let bad = |problem: String| ProbeSetError {
            path: path.to_path_buf(),
            problem,
        };
        let size = std::fs::metadata(path)
            .map_err(|e| bad(format!("cannot read it ({e})")))?
            .len();
        if size > MAX_FILE_BYTES {
            return Err(bad(format!(
                "it is {size} bytes, more than the {MAX_FILE_BYTES} a probe set may have"
            )));
        }
        let text =
            std::fs::read_to_string(path).map_err(|e| bad(format!("cannot read it ({e})")))?;
        let set: ProbeSet = if path.extension().is_some_and(|x| x == "json") {
            serde_json::from_str(&text).map_err(|e| bad(format!("not a probe set ({e})")))?
        } else {
            toml::from_str(&text).map_err(|e| bad(format!("not a probe set ({e})")))?
        };
        set.check().map_err(bad)?;
        Ok(set)
    }

    /// What is wrong with the set, if anything.
    ///
    /// # Errors
    /// The first problem found, in words.
    pub fn check(&self) -> Result<(), String> {
        let empty = |what: &str, text: &str| {
            if text.trim().is_empty() {
                Err(format!("{what} is empty"))
            } else {
                Ok(())
            }
        };
        empty("version", &self.version)?;
        empty("roleplay.system", &self.roleplay.system)?;
        empty("roleplay.user", &self.roleplay.user)?;
        empty("schema.user", &self.schema.user)?;
        let schema = self
            .schema
            .schema
            .as_object()
            .ok_or("schema.schema is not a JSON object")?;
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err("schema.schema must be an object schema (\"type\": \"object\")".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_set_is_todays_content_and_valid() {
        let set = ProbeSet::builtin();
        assert_eq!(set.version, "canary-probes/1");
        assert!(set.check().is_ok());
        assert!(set.roleplay.system.contains("Stay in character"));
    }

    #[test]
    fn a_file_is_read_in_toml_or_json_and_checked_naming_the_problem() {
        let dir = tempfile::tempdir().unwrap();
        let toml_path = dir.path().join("probes.toml");
        std::fs::write(
            &toml_path,
            "version = \"mine/2\"\n[roleplay]\nsystem = \"You are a support agent.\"\n\
             user = \"My order is late.\"\n[schema]\nuser = \"Give the order as JSON.\"\n\
             schema = { type = \"object\", required = [\"id\"], properties = { id = { type = \"string\" } } }\n",
        )
        .unwrap();
        let set = ProbeSet::load(&toml_path).unwrap();
        assert_eq!(set.version, "mine/2");
        let json_path = dir.path().join("probes.json");
        std::fs::write(&json_path, serde_json::to_string(&set).unwrap()).unwrap();
        assert_eq!(ProbeSet::load(&json_path).unwrap(), set);

        let mut bad = set.clone();
        bad.version = " ".into();
        std::fs::write(&json_path, serde_json::to_string(&bad).unwrap()).unwrap();
        let err = ProbeSet::load(&json_path).unwrap_err().to_string();
        assert!(
            err.contains("probes.json") && err.contains("version is empty"),
            "{err}"
        );
        std::fs::write(&toml_path, "version = \"x\"\n").unwrap();
        let err = ProbeSet::load(&toml_path).unwrap_err().to_string();
        assert!(
            err.contains("probes.toml") && err.contains("roleplay"),
            "{err}"
        );
        let err = ProbeSet::load(&dir.path().join("none.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("none.toml") && err.contains("--probes"),
            "{err}"
        );
    }
}
