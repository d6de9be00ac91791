//! What `report merge` refuses before it reads a row: a directory that is
//! not a shard, shards of different runs (seed, dataset, fault profile,
//! version or any other setting that changes a verdict), an interrupted
//! shard, a shard given twice, and a shard missing. Every refusal names the
//! directory and what to do.

use crate::config::ResolvedConfig;
use crate::shard::ShardManifest;
use cb_driver::Shard;
use cb_report::ReportError;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Settings shards of one run may differ in: which shard, how hard each
/// machine drove its systems, where it found its inputs and its gateway,
/// and what it measured of its own process.
const MAY_DIFFER: [&str; 9] = [
    "shard",
    "concurrency",
    "requests_in_flight",
    "interrupted",
    "interrupted_by",
    "dataset",
    "fault_profile",
    "gateways",
    "merged_from",
];

/// Why shards cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// `report merge` with no directory.
    #[error("report merge needs the directories of the shards of one run, e.g. `report merge shard-0 shard-1`")]
    NoDirectories,
    /// A directory that cannot be read as a report.
    #[error("{}: {source}", dir.display())]
    Read {
        /// The directory.
        dir: PathBuf,
        /// What failed.
        source: ReportError,
    },
    /// A report of a whole run, not of a shard.
    #[error(
        "{} is not a shard (it has no shard.json): make each shard with `run --shard K/N` and merge their directories",
        dir.display()
    )]
    NotAShard {
        /// The directory.
        dir: PathBuf,
    },
    /// A setting that differs from the first shard's.
    #[error(
        "{} has {setting} {value}, but {} has {first_value}: only shards of one run can be merged (the same seed, dataset, \
         fault profile, version and settings, each run with its own --shard K/N)",
        dir.display(),
        first.display()
    )]
    Differs {
        /// The directory.
        dir: PathBuf,
        /// The setting, as config.json names it.
        setting: String,
        /// Its value there.
        value: String,
        /// The first shard's directory.
        first: PathBuf,
        /// Its value there.
        first_value: String,
    },
    /// An interrupted shard.
    #[error(
        "{} is shard {shard}, interrupted (Ctrl-C) before all its conversations finished: run that shard again",
        dir.display()
    )]
    Interrupted {
        /// The directory.
        dir: PathBuf,
        /// Its shard.
        shard: Shard,
    },
    /// One shard given twice.
    #[error(
        "{} and {} are both shard {shard}: give each shard's directory once",
        first.display(),
        dir.display()
    )]
    Duplicate {
        /// The second directory.
        dir: PathBuf,
        /// The first.
        first: PathBuf,
        /// The shard.
        shard: Shard,
    },
    /// Shards no directory holds.
    #[error("{}", missing_message(missing))]
    Missing {
        /// The missing shards.
        missing: Vec<Shard>,
    },
    /// A shard whose files do not agree with each other.
    #[error("{}: {detail}; the shard's files were changed or mixed up, run that shard again", dir.display())]
    Inconsistent {
        /// The directory.
        dir: PathBuf,
        /// What disagrees.
        detail: String,
    },
}

/// The message of [`MergeError::Missing`].
fn missing_message(missing: &[Shard]) -> String {
    match missing {
        [one] => format!(
            "shard {one} of the run is missing: run it (`run --shard {one}` with the run's other flags) and give its \
             directory too"
        ),
        many => format!(
            "shards {} of the run are missing: run each (`run --shard K/N` with the run's other flags) and give their \
             directories too",
            many.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// One shard directory, read far enough to check it.
#[derive(Debug, Clone)]
pub struct ShardDir {
    /// The directory, as given.
    pub dir: PathBuf,
    /// Its config.json.
    pub config: ResolvedConfig,
    /// Its shard.json.
    pub manifest: ShardManifest,
}

impl ShardDir {
    /// Reads config.json and shard.json of `dir`.
    ///
    /// # Errors
    /// [`MergeError::Read`] or [`MergeError::NotAShard`].
    pub fn read(dir: &Path) -> Result<Self, MergeError> {
        let read = |source| MergeError::Read {
            dir: dir.to_path_buf(),
            source,
        };
        let config = crate::report::read::read_config(dir).map_err(read)?;
        if !dir.join(crate::shard::SHARD_FILE).is_file() {
            return Err(MergeError::NotAShard {
                dir: dir.to_path_buf(),
            });
        }
        let manifest = ShardManifest::read(dir).map_err(read)?;
        Ok(ShardDir {
            dir: dir.to_path_buf(),
            config,
            manifest,
        })
    }
}

/// The settings of a configuration that decide its verdicts, as JSON.
fn settings(config: &ResolvedConfig) -> serde_json::Map<String, Value> {
    let mut map = match serde_json::to_value(config) {
        Ok(Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    for key in MAY_DIFFER {
        map.remove(key);
    }
    map
}

/// What a shard's config.json and shard.json must agree on.
fn consistent(s: &ShardDir) -> Result<(), MergeError> {
    let m = &s.manifest;
    let c = &s.config;
    let detail = if c.shard != Some(m.shard) {
        Some(format!(
            "config.json names shard {}, shard.json {}",
            c.shard.map_or_else(|| "none".into(), |x| x.to_string()),
            m.shard
        ))
    } else if c.seed != m.seed || c.version != m.version {
        Some("config.json and shard.json name different seeds or versions".into())
    } else if c.dataset_sha256.as_deref() != Some(m.dataset_sha256.as_str())
        || c.fault_profile_sha256.as_deref() != Some(m.fault_profile_sha256.as_str())
    {
        Some("config.json and shard.json name different dataset or fault profile digests".into())
    } else if c.conversations != m.dataset_conversations
        || m.conversations.len() != m.shard.len(m.dataset_conversations as usize)
    {
        Some(format!(
            "shard.json lists {} conversations, but shard {} of a dataset of {} has {}",
            m.conversations.len(),
            m.shard,
            c.conversations,
            m.shard.len(c.conversations as usize)
        ))
    } else {
        None
    };
    match detail {
        Some(detail) => Err(MergeError::Inconsistent {
            dir: s.dir.clone(),
            detail,
        }),
        None => Ok(()),
    }
}

/// Checks that `shards` are every shard of one run, each once, whole and
/// consistent, and returns them in shard order.
///
/// # Errors
/// The first [`MergeError`] found, naming the directory.
pub fn check(mut shards: Vec<ShardDir>) -> Result<Vec<ShardDir>, MergeError> {
    let Some(first) = shards.first().cloned() else {
        return Err(MergeError::NoDirectories);
    };
    let reference = settings(&first.config);
    for s in &shards {
        consistent(s)?;
        if s.manifest.shard.count != first.manifest.shard.count {
            return Err(MergeError::Differs {
                dir: s.dir.clone(),
                setting: "shard".into(),
                value: s.manifest.shard.to_string(),
                first: first.dir.clone(),
                first_value: first.manifest.shard.to_string(),
            });
        }
        let mine = settings(&s.config);
        let keys = reference
            .keys()
            .chain(mine.keys().filter(|k| !reference.contains_key(*k)));
        for key in keys {
            let (a, b) = (reference.get(key), mine.get(key));
            if a != b {
                let show =
                    |v: Option<&Value>| v.map_or_else(|| "nothing".to_string(), Value::to_string);
                return Err(MergeError::Differs {
                    dir: s.dir.clone(),
                    setting: key.clone(),
                    value: show(b),
                    first: first.dir.clone(),
                    first_value: show(a),
                });
            }
        }
        if s.config.interrupted {
            return Err(MergeError::Interrupted {
                dir: s.dir.clone(),
                shard: s.manifest.shard,
            });
        }
    }
    shards.sort_by_key(|s| s.manifest.shard.index);
    for pair in shards.windows(2) {
        if pair[0].manifest.shard == pair[1].manifest.shard {
            return Err(MergeError::Duplicate {
                dir: pair[1].dir.clone(),
                first: pair[0].dir.clone(),
                shard: pair[1].manifest.shard,
            });
        }
    }
    let count = first.manifest.shard.count;
    let missing: Vec<Shard> = (0..count)
        .filter(|k| !shards.iter().any(|s| s.manifest.shard.index == *k))
        .filter_map(|k| Shard::new(k, count).ok())
        .collect();
    if !missing.is_empty() {
        return Err(MergeError::Missing { missing });
    }
    Ok(shards)
}
