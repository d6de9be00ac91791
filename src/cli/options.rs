//! Groups of flags several commands share (flattened into each): the
//! latency model, the real providers behind the upstreams, the systems
//! under test, the answer contracts and the LLM judge.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// Latency model of the simulated upstreams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LatencyArg {
    /// No modelled delay (for tests).
    Instant,
    /// A few milliseconds to first token and fast output (the default for runs).
    Fast,
    /// Hundreds of milliseconds to first token, tens of tokens per second.
    Realistic,
}

/// The API the driver speaks to every system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ApiArg {
    /// Chat completions: the client sends the whole history every turn.
    #[default]
    Chat,
    /// The Responses API: the client sends the turn's new input and
    /// `previous_response_id` (`store: true`), and the system keeps the
    /// history. Live replay, plain (not streamed) requests only.
    Responses,
}

impl From<ApiArg> for cb_base::api::Api {
    fn from(a: ApiArg) -> Self {
        match a {
            ApiArg::Chat => cb_base::api::Api::Chat,
            ApiArg::Responses => cb_base::api::Api::Responses,
        }
    }
}

/// A real OpenAI-compatible provider behind the simulated upstreams: each
/// upstream becomes a fault-injecting proxy in front of it. Faults fire on
/// the wire as with the simulated model (a faulted attempt never reaches
/// the provider); everything else is forwarded with the provider's model id
/// and key. Shared by `run` and `upstreams`.
#[derive(Debug, Clone, Default, Args)]
pub struct ProviderOptions {
    /// Base URL of an OpenAI-compatible provider both upstreams forward to,
    /// e.g. http://127.0.0.1:11434/v1 (Ollama) or https://api.openai.com/v1;
    /// requests go to URL/chat/completions. Without it (and without
    /// --primary-provider) the upstreams answer with the simulated model.
    #[arg(long, value_name = "URL")]
    pub provider: Option<String>,
    /// Model id sent to the --provider (required with it), e.g. gpt-4o-mini.
    #[arg(long, value_name = "MODEL")]
    pub provider_model: Option<String>,
    /// Name of the environment variable holding the --provider's API key,
    /// sent as a Bearer token and never printed or written. Without it no
    /// key is sent (a local server needs none).
    #[arg(long, value_name = "VAR")]
    pub provider_key_env: Option<String>,
    /// Base URL of the provider behind the primary upstream (with
    /// --fallback-provider, instead of --provider).
    #[arg(long, value_name = "URL")]
    pub primary_provider: Option<String>,
    /// Model id sent to the --primary-provider (required with it).
    #[arg(long, value_name = "MODEL")]
    pub primary_provider_model: Option<String>,
    /// Environment variable holding the --primary-provider's key.
    #[arg(long, value_name = "VAR")]
    pub primary_provider_key_env: Option<String>,
    /// Base URL of the provider behind the fallback upstream (with
    /// --primary-provider, instead of --provider).
    #[arg(long, value_name = "URL")]
    pub fallback_provider: Option<String>,
    /// Model id sent to the --fallback-provider (required with it).
    #[arg(long, value_name = "MODEL")]
    pub fallback_provider_model: Option<String>,
    /// Environment variable holding the --fallback-provider's key.
    #[arg(long, value_name = "VAR")]
    pub fallback_provider_key_env: Option<String>,
}

/// Options of the answer contracts every answer is checked against.
/// Shared by every command that checks answers.
#[derive(Debug, Clone, Args)]
pub struct ContractOptions {
    /// The `ttft` contract fails a stream whose first content token came
    /// later than this after the request was sent.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub ttft_limit: std::time::Duration,
}

/// The systems under test: the built-in reference proxies and any external
/// gateways. Shared by every command that drives systems.
#[derive(Debug, Clone, Args)]
pub struct SystemOptions {
    /// Read the systems under test from this TOML file (each system's name,
    /// a base URL or a built-in proxy, headers with `env:VAR` secrets,
    /// upstream ports, model id, notes; see examples/systems/). Replaces
    /// --gateway, --no-builtin, --upstream-ports and --header.
    #[arg(long = "systems", value_name = "FILE",
          conflicts_with_all = ["gateways", "no_builtin", "upstream_ports", "headers", "gateway_models"])]
    pub systems: Option<PathBuf>,
    /// Add an OpenAI-compatible gateway as a system under test, as
    /// NAME=URL (base URL without /v1, e.g. litellm=http://127.0.0.1:4000,
    /// or the full chat-completions URL of a gateway that serves it
    /// elsewhere, e.g. helicone=http://127.0.0.1:8080/router/r/chat/completions).
    /// Repeatable. Each gets its own upstream pair; the ports are printed at
    /// start and set with --upstream-ports.
    #[arg(long = "gateway", value_name = "NAME=URL")]
    pub gateways: Vec<String>,
    /// Run only the --gateway systems, not the built-in stateless and history
    /// proxies.
    #[arg(long)]
    pub no_builtin: bool,
    /// Ports of a gateway's simulated upstreams, as NAME=PRIMARY,FALLBACK.
    /// Default for the k-th gateway (from 0): 9001+10k and 9002+10k.
    #[arg(long = "upstream-ports", value_name = "NAME=PRIMARY,FALLBACK")]
    pub upstream_ports: Vec<String>,
    /// An extra request header for a gateway, as NAME:HEADER=VALUE; a value
    /// written env:VAR is read from the environment variable VAR. Values are
    /// never printed or written to a report. Repeatable.
    #[arg(long = "header", value_name = "NAME:HEADER=VALUE")]
    pub headers: Vec<String>,
    /// The model id the driver asks every system for (a gateway routes on it).
    #[arg(long, default_value = crate::driver::DRIVER_MODEL)]
    pub model: String,
    /// The model id one --gateway is asked for instead of --model, for a
    /// gateway that names its models its own way (TensorZero:
    /// `tensorzero::model_name::continuity-sim`): NAME=MODEL, repeatable.
    /// Its upstreams see whatever model id the gateway sends them. A
    /// systems file sets it with `model = "..."` on the gateway's entry.
    #[arg(long = "gateway-model", value_name = "NAME=MODEL")]
    pub gateway_models: Vec<String>,
    /// How long to wait for each --gateway to answer a probe request before
    /// giving up with the configuration it should have.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub gateway_wait: std::time::Duration,
    /// Largest response body, in bytes, read from a system under test
    /// (default 4 MiB). A larger one, plain or streamed, is an `error` and
    /// is not read further.
    #[arg(long, value_name = "BYTES", default_value_t = crate::client::DEFAULT_MAX_RESPONSE_BYTES,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_response_bytes: u64,
    /// The dialect the built-in systems' fallback speaks: openai, anthropic
    /// (Messages, /v1/messages) or gemini (generateContent). Both
    /// reference proxies translate their fallback request into it and the
    /// answer back; the harness's fallback upstream serves and validates
    /// it. Default openai.
    #[arg(long, default_value = "openai", value_name = "DIALECT")]
    pub fallback_dialect: crate::dialect::Dialect,
    /// The API the driver speaks to every system: `chat` (chat
    /// completions, the whole history every turn) or `responses` (the
    /// Responses API: only the turn's new input and
    /// `previous_response_id`; the system keeps the history). `responses`
    /// is `run` only, live and plain (not streamed). A systems file sets it
    /// with `api = "responses"`.
    #[arg(long, value_enum, default_value_t = ApiArg::Chat)]
    pub api: ApiArg,
}

/// Options selecting the LLM judge that decides what the fast-path scorer
/// leaves undetermined. Shared by every command that scores answers.
#[derive(Debug, Clone, Args)]
pub struct JudgeOptions {
    /// Base URL of an OpenAI-compatible API used as judge, e.g.
    /// https://api.openai.com/v1 (or the full .../chat/completions URL), or
    /// `sim` for the built-in simulated judge. Without it, answers the fast
    /// path cannot decide stay undetermined.
    #[arg(long, value_name = "URL")]
    pub judge: Option<String>,
    /// Model id the judge is asked with (required with a URL; default
    /// `sim-judge` for `--judge sim`).
    #[arg(long, value_name = "MODEL")]
    pub judge_model: Option<String>,
    /// Name of the environment variable holding the judge's API key. The key
    /// is sent as a Bearer token and never printed.
    #[arg(long, value_name = "VAR", default_value = "OPENAI_API_KEY")]
    pub judge_key_env: String,
    /// JSONL file caching judge verdicts across runs (created if missing);
    /// keyed by model, prompt version, anchor, probe and answer.
    #[arg(long, value_name = "PATH")]
    pub judge_cache: Option<PathBuf>,
    /// Deadline of one judge request; a request that misses it is retried
    /// (3 attempts in all), then the verdict is undetermined.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub judge_timeout: std::time::Duration,
}
