//! The base of continuity-bench: what every layer shares and none owns.
//! Named sub-seeds of the one master seed ([`seed`]), the one secret type
//! whose `Debug` and `Display` redact ([`secret`]), built-in inputs and the
//! paths that override them ([`source`]), the languages the product knows
//! ([`language`]), the answer contracts' names and outcomes ([`contract`]),
//! which upstream an attempt went to ([`role`]), which
//! built-in reference system a target is ([`reference`](mod@reference)), the rows
//! every suite records ([`record`]), how a whole number is written with
//! thousands separators ([`number`]), how a URL is shown without its
//! credentials ([`url`]), which signal stopped a command ([`stop`]), and
//! the fingerprints indexes keep instead of texts ([`fingerprint`]), and a
//! peer's text made safe on a terminal ([`escape`]).

pub mod api;
pub mod contract;
pub mod escape;
pub mod fingerprint;
pub mod language;
pub mod number;
pub mod record;
pub mod reference;
pub mod role;
pub mod secret;
pub mod seed;
pub mod source;
pub mod stop;
pub mod url;

/// The tool's name, as reports and `config.json` record it.
pub const TOOL: &str = "continuity-bench";

/// The tool's version (every crate of the workspace shares it), as reports
/// record it and `report DIR` checks it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

pub use language::Language;
pub use role::Role;
