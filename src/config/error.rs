//! Why a configuration was refused: one error type for every command's
//! options, each message naming the flag and the fix.

/// A run setting that cannot be used, with the flag to fix.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A value outside its allowed range ([`super::ranges`]).
    #[error(transparent)]
    Range(#[from] super::ranges::OutOfRange),
    /// A fault profile that cannot be read or is not valid.
    #[error(transparent)]
    Faults(#[from] crate::faults::FaultError),
    /// `--api responses` with a flag it cannot honour.
    #[error("--api responses cannot be combined with {0}: the Responses mode replays every turn live (the system keeps the history) and asks for plain answers; drop {0} or use --api chat")]
    ResponsesWith(&'static str),
    /// `--api responses` in a command that speaks chat completions only.
    #[error("--api responses is `run` only: `{0}` speaks chat completions in this version; drop --api (or `api` in the systems file) for `{0}`")]
    ResponsesNotIn(&'static str),
    /// `--runs 0`.
    #[error("--runs must be at least 1 (got {0})")]
    Runs(u32),
    /// `--concurrency 0`.
    #[error("--concurrency must be at least 1 (got {0})")]
    Concurrency(usize),
    /// `--fail-under-cpr` outside 0..=100.
    #[error("--fail-under-cpr is a percentage between 0 and 100 (got {0})")]
    FailUnder(f64),
    /// A `--gateway` that is not NAME=URL.
    #[error("--gateway expects NAME=URL, e.g. litellm=http://127.0.0.1:4000 (got {0:?})")]
    Gateway(String),
    /// Two systems with one name.
    #[error("two systems are named {0:?}; give each --gateway its own name (stateless and history are taken unless --no-builtin)")]
    DuplicateSystem(String),
    /// Nothing to run.
    #[error("--no-builtin leaves no system to run; add at least one --gateway NAME=URL")]
    NoSystems,
    /// A `--upstream-ports` that is not NAME=PRIMARY,FALLBACK or names no gateway.
    #[error("--upstream-ports expects NAME=PRIMARY,FALLBACK for a --gateway NAME, e.g. litellm=9001,9002 (got {0:?})")]
    UpstreamPorts(String),
    /// The Responses API asked of a gateway given by its chat-completions URL.
    #[error("gateway {0:?} is given by its chat-completions URL, which says nothing of where its Responses API is; give its base URL with --api responses")]
    ResponsesChatUrl(String),
    /// A `--gateway-model` that is not NAME=MODEL or names no gateway.
    #[error("--gateway-model expects NAME=MODEL for a --gateway NAME, e.g. tensorzero=tensorzero::model_name::continuity-sim (got {0:?})")]
    GatewayModel(String),
    /// A `--header` that is not NAME:HEADER=VALUE or names no gateway.
    #[error("--header expects NAME:HEADER=VALUE for a --gateway NAME, e.g. portkey:x-portkey-config=env:PORTKEY_CONFIG (got {0:?})")]
    Header(String),
    /// A `--header` name that is not a valid HTTP header name.
    #[error("--header {header:?} for {gateway} is not a valid HTTP header name; use letters, digits and dashes, e.g. Authorization or X-Api-Key")]
    HeaderName {
        /// The gateway.
        gateway: String,
        /// The header name.
        header: String,
    },
    /// A `--header` value that cannot be sent (a line break, a control
    /// character); the value itself is never printed.
    #[error("the value of --header {header} for {gateway} holds a line break or a control character and cannot be sent; fix the value (it is not shown here)")]
    HeaderValue {
        /// The gateway.
        gateway: String,
        /// The header name.
        header: String,
    },
    /// Two upstreams on one port.
    #[error("port {port} is given to {first} and to {second}; give every upstream its own port with --upstream-ports NAME=PRIMARY,FALLBACK")]
    PortTaken {
        /// The port.
        port: u16,
        /// Its first use.
        first: String,
        /// Its second use.
        second: String,
    },
    /// A gateway URL on one of the harness's upstream ports.
    #[error("--gateway {gateway}={url} points at {upstream}: the harness would talk to its own simulated upstream; give the gateway's own address, or move the upstream with --upstream-ports")]
    GatewayOnUpstreamPort {
        /// The gateway.
        gateway: String,
        /// Its URL.
        url: String,
        /// The upstream it points at.
        upstream: String,
    },
    /// A `--header` value read from an unset environment variable.
    #[error("--header {header} for {gateway} reads the environment variable {var}, which is not set; export it first")]
    MissingEnv {
        /// The gateway.
        gateway: String,
        /// The header name.
        header: String,
        /// The variable.
        var: String,
    },
    /// A systems file that cannot be used.
    #[error(transparent)]
    SystemsFile(#[from] super::SystemsFileError),
    /// A system of a systems file that the flags' validator refused.
    #[error("in --systems {path}: {source}")]
    InSystemsFile {
        /// The file.
        path: String,
        /// What the validator said.
        source: Box<ConfigError>,
    },
    /// Unusable provider options.
    #[error(transparent)]
    Provider(#[from] super::ProviderConfigError),
    /// Unusable judge options.
    #[error(transparent)]
    Judge(#[from] crate::judge::JudgeConfigError),
    /// `--fail-system` names no system of the run.
    #[error(
        "--fail-system {name:?} is not a system of this run (systems: {systems}); name one of them"
    )]
    FailSystem {
        /// The name given.
        name: String,
        /// The systems, comma-separated.
        systems: String,
    },
    /// A dataset or fault profile that is neither a file nor built in.
    #[error(transparent)]
    Source(#[from] crate::source::SourceError),
    /// An output file that cannot be written.
    #[error("cannot write {flag} {path}: {reason}; pass a path in a directory that exists and is writable")]
    Unwritable {
        /// The flag.
        flag: &'static str,
        /// The path.
        path: String,
        /// Why.
        reason: String,
    },
    /// `upstreams --run 0`.
    #[error("--run counts from 1; pass --run 1 or more")]
    RunIndex,
    /// A zero duration.
    #[error("{flag} must be longer than zero")]
    ZeroDuration {
        /// The flag.
        flag: &'static str,
    },
    /// `--retry-status` naming a status the decision tree does not fail
    /// over on: retrying it would discard an answer or repeat a permanent
    /// error.
    #[error(
        "--retry-status {0}: only statuses the proxy fails over on can be retried on the same route \
         (5xx, 404, 429); drop {0} from the list"
    )]
    RetryStatus(u16),
    /// `canary --model` that is not author/slug.
    #[error("--model expects author/slug, e.g. meta-llama/llama-3.3-70b-instruct (got {0:?})")]
    CanaryModel(String),
    /// `canary --endpoint` that is not an HTTP URL.
    #[error("--endpoint expects an http:// or https:// base URL, e.g. https://openrouter.ai/api/v1 (got {0:?})")]
    CanaryEndpoint(String),
    /// `canary --probes` file that cannot be used.
    #[error(transparent)]
    CanaryProbes(#[from] crate::canary::probe::set::ProbeSetError),
    /// `canary --languages` with an unknown code.
    #[error(
        "--languages: {0:?} is not a language the canary knows; give ISO 639-1 codes among {1}"
    )]
    CanaryLanguage(String, String),
    /// `canary --webhook` that is not an HTTP URL.
    #[error("--webhook expects an http:// or https:// URL, e.g. https://hooks.example.com/canary (got {0:?})")]
    CanaryWebhook(String),
    /// `canary --endpoint` without a key in the environment.
    #[error("--endpoint needs an API key, and the environment variable {var} (named by --key-env) is not set or is empty; export it, or drop --endpoint to run offline against the simulated endpoint")]
    MissingKey {
        /// The variable.
        var: String,
    },
    /// A `canary power --contracts` entry that is no contract of the probes.
    #[error("--contracts names {given:?}, which no canary probe checks; name some of: {known}")]
    PowerContract {
        /// The name given.
        given: String,
        /// The contracts the probes check, comma-separated.
        known: String,
    },
    /// A `canary power` share that cannot be a probability of that kind.
    #[error("{flag} is {value}, outside {allowed}; {fix}")]
    PowerShare {
        /// The flag.
        flag: &'static str,
        /// The value given.
        value: f64,
        /// The allowed range.
        allowed: &'static str,
        /// What to pass.
        fix: &'static str,
    },
    /// `canary power --within` shorter than one round.
    #[error("--within {within} is shorter than one round (--interval {interval}); pass a longer --within or a shorter --interval")]
    PowerWithin {
        /// The span given.
        within: String,
        /// The interval.
        interval: String,
    },
    /// A `canary --routes` entry that is not a route name.
    #[error("--routes holds {0:?}, which is not a route name; separate names with commas, with no spaces inside a name")]
    CanaryRoute(String),
    /// A `canary --routes` entry the simulated endpoint does not serve.
    #[error("--routes names {route:?}, which the simulated endpoint does not serve (its routes: {routes}); name some of them, or pass --endpoint")]
    UnknownSimRoute {
        /// The name given.
        route: String,
        /// The simulated routes, comma-separated.
        routes: String,
    },
    /// `canary --control` that is not among the routes.
    #[error("--control {control:?} is not one of the routes probed ({routes}); name one of them")]
    ControlNotARoute {
        /// The name given.
        control: String,
        /// The routes, comma-separated.
        routes: String,
    },
    /// `canary --transient-rate` outside 0..=1.
    #[error("--transient-rate is a share between 0 and 1, e.g. 0.1 (got {0})")]
    TransientRate(f64),
    /// `canary --transient-rate` with a real endpoint.
    #[error(
        "--transient-rate applies to the simulated endpoint only; drop it, or drop --endpoint"
    )]
    TransientWithEndpoint,
    /// `canary --probe-timeout` too short for the time-to-first-token limit.
    #[error("--probe-timeout {timeout} must be longer than {floor} ({why}), or a slow first token is timed out instead of judged; raise --probe-timeout or lower --ttft-limit")]
    ProbeTimeout {
        /// The timeout given.
        timeout: String,
        /// The shortest usable timeout.
        floor: String,
        /// Why that floor.
        why: &'static str,
    },
    /// An unusable canary state file.
    #[error(transparent)]
    CanaryState(#[from] crate::canary::state::StateError),
    /// An unusable ignore list.
    #[error(transparent)]
    CanaryList(#[from] crate::canary::ignore::IgnoreError),
}
