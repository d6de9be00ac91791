//! The judge options validated into a [`JudgeConfig`], and the
//! `judge calibrate` invocation.

use crate::cli::{CalibrateArgs, JudgeOptions};
use crate::judge::calibrate::CalibrateConfig;
use crate::judge::{JudgeConfig, JudgeConfigError, JudgeEndpoint, SIM_ENDPOINT, SIM_MODEL};
use crate::secret::Secret;

/// Validates the judge options; `None` when no judge was asked for.
/// `env` looks up an environment variable (`std::env::var` in the binary).
///
/// # Errors
/// [`JudgeConfigError`] naming the flag to fix.
pub fn judge_config(
    options: &JudgeOptions,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<JudgeConfig>, JudgeConfigError> {
    let Some(judge) = options.judge.as_deref() else {
        if options.judge_model.is_some() {
            return Err(JudgeConfigError::WithoutJudge("--judge-model"));
        }
        if options.judge_cache.is_some() {
            return Err(JudgeConfigError::WithoutJudge("--judge-cache"));
        }
        return Ok(None);
    };
    let (endpoint, model, key) = if judge == SIM_ENDPOINT {
        let model = options.judge_model.as_deref().unwrap_or(SIM_MODEL);
        (JudgeEndpoint::Sim, model.to_string(), None)
    } else {
        let model = options
            .judge_model
            .clone()
            .ok_or_else(|| JudgeConfigError::MissingModel(cb_base::url::display_url(judge)))?;
        let key = env(&options.judge_key_env)
            .filter(|k| !k.trim().is_empty())
            .ok_or_else(|| JudgeConfigError::MissingKey(options.judge_key_env.clone()))?;
        (
            JudgeEndpoint::Url(judge.to_string()),
            model,
            Some(Secret::new(key.trim())),
        )
    };
    Ok(Some(JudgeConfig {
        endpoint,
        model,
        key,
        cache: options.judge_cache.clone(),
        timeout: options.judge_timeout,
    }))
}

/// Validates `judge calibrate` arguments, reading the judge's key with `env`.
///
/// # Errors
/// [`JudgeConfigError`] naming the flag to fix.
pub fn calibrate_config(
    args: &CalibrateArgs,
    env: impl Fn(&str) -> Option<String>,
) -> Result<CalibrateConfig, JudgeConfigError> {
    Ok(CalibrateConfig {
        judge: judge_config(&args.judge, env)?,
        cases: match &args.cases {
            Some(path) => crate::source::Source::File(path.clone()),
            None => crate::source::Source::BuiltIn(&crate::judge::calibrate::BUILT_IN_CASES),
        },
        seed: args.seed,
        concurrency: args.concurrency.max(1),
    })
}
