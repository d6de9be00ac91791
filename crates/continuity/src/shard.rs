//! What a shard of a run (`run --shard K/N`) writes beside its report, so
//! that `report merge` can check the shards belong together and put their
//! rows back in the order a whole run gives them: `shard.json`, the
//! shard's identity, the digests of the inputs it replayed and the ids of
//! its conversations in index order; and the digests themselves (the
//! dataset and the fault profile, by their bytes, wherever each machine
//! keeps its copy).
//!
//! Which conversations a shard replays is [`Shard`]'s rule: every N-th by
//! index, from K.

use cb_base::source::Source;
use cb_driver::Shard;
use cb_report::ReportError;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::Path;

/// File name of a shard's manifest.
pub const SHARD_FILE: &str = "shard.json";

/// A shard's manifest (`shard.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardManifest {
    /// Which shard: K of N.
    pub shard: Shard,
    /// How the conversations were split among the shards, in words.
    pub selection: String,
    /// Tool version that wrote it.
    pub version: String,
    /// Master seed.
    pub seed: u64,
    /// Conversations in the whole dataset.
    pub dataset_conversations: u32,
    /// SHA-256 of the dataset's bytes.
    pub dataset_sha256: String,
    /// SHA-256 of the fault profile's bytes.
    pub fault_profile_sha256: String,
    /// The ids of this shard's conversations, in index order: the p-th is
    /// conversation `K + p * N` of the dataset.
    pub conversations: Vec<String>,
}

/// The selection rule, as the manifest states it.
pub const SELECTION: &str =
    "every N-th conversation by index: shard K replays the conversations whose index i (from 0) has i mod N = K";

impl ShardManifest {
    /// The manifest of `shard` of a dataset whose conversations have the
    /// ids `ids`, in index order.
    pub fn new(
        shard: Shard,
        seed: u64,
        ids: &[String],
        dataset_sha256: String,
        fault_profile_sha256: String,
    ) -> Self {
        ShardManifest {
            shard,
            selection: SELECTION.to_string(),
            version: cb_base::VERSION.to_string(),
            seed,
            dataset_conversations: ids.len() as u32,
            dataset_sha256,
            fault_profile_sha256,
            conversations: shard
                .conversations(ids.len())
                .map(|i| ids[i].clone())
                .collect(),
        }
    }

    /// Writes it as `shard.json` into the report directory `dir`.
    ///
    /// # Errors
    /// [`ReportError`] naming the file when it cannot be written.
    pub fn write(&self, dir: &Path) -> Result<(), ReportError> {
        let path = dir.join(SHARD_FILE);
        let bytes = cb_report::json::pretty(SHARD_FILE, self)?;
        std::fs::write(&path, bytes).map_err(|source| ReportError::Write { path, source })
    }

    /// Reads `shard.json` from the report directory `dir`.
    ///
    /// # Errors
    /// [`ReportError`] naming the file when it is missing or not a manifest.
    pub fn read(dir: &Path) -> Result<Self, ReportError> {
        cb_report::json::read(&dir.join(SHARD_FILE))
    }
}

/// SHA-256 of a source's bytes, in hex: a file is read in pieces, a
/// built-in copy hashed where it lies.
///
/// # Errors
/// When the file cannot be read.
pub fn sha256(source: &Source) -> std::io::Result<String> {
    let mut hasher = Sha256::new();
    match source {
        Source::BuiltIn(b) => hasher.update(b.text.as_bytes()),
        Source::File(path) => {
            let mut file = std::fs::File::open(path)?;
            let mut buffer = vec![0u8; 64 * 1024];
            loop {
                let n = file.read(&mut buffer)?;
                if n == 0 {
                    break;
                }
                hasher.update(&buffer[..n]);
            }
        }
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_and_its_built_in_copy_have_one_digest_and_a_changed_byte_another() {
        let builtin = Source::BuiltIn(&cb_dataset::BUILTIN_DATASETS[0]);
        let Source::BuiltIn(b) = &builtin else {
            panic!("the default dataset is built in");
        };
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path().join("copy.jsonl");
        std::fs::write(&copy, b.text).unwrap();
        let file = Source::File(copy.clone());
        assert_eq!(sha256(&builtin).unwrap(), sha256(&file).unwrap());
        assert_eq!(sha256(&file).unwrap().len(), 64);
        let mut changed = b.text.as_bytes().to_vec();
        changed[10] ^= 1;
        std::fs::write(&copy, changed).unwrap();
        assert_ne!(sha256(&builtin).unwrap(), sha256(&file).unwrap());
        assert!(sha256(&Source::File(dir.path().join("missing"))).is_err());
    }

    #[test]
    fn the_manifest_lists_the_shard_s_conversations_in_index_order() {
        let dataset = cb_dataset::Dataset::builtin_default();
        let shard = Shard::new(2, 4).unwrap();
        let ids: Vec<String> = dataset.conversations.iter().map(|c| c.id.clone()).collect();
        let m = ShardManifest::new(shard, 42, &ids, "d".into(), "p".into());
        assert_eq!(m.dataset_conversations, 150);
        assert_eq!(m.conversations.len(), shard.len(150));
        assert_eq!(m.conversations[0], dataset.conversations[2].id);
        assert_eq!(m.conversations[1], dataset.conversations[6].id);
        let dir = tempfile::tempdir().unwrap();
        m.write(dir.path()).unwrap();
        assert_eq!(ShardManifest::read(dir.path()).unwrap(), m);
    }
}
