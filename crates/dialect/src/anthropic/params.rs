//! The optional parameters of a Messages request, checked as the API
//! checks them: sampling ranges (`temperature` and `top_p` in 0-1), stop
//! sequences, metadata, service tier, extended thinking, and the tool
//! definitions and `tool_choice`.

use super::blocks::{self, at, object, only, opt_string};
use crate::Rejection;
use serde_json::{json, Map, Value};

fn number(top: &Map<String, Value>, key: &str, max: Option<f64>) -> Result<(), Rejection> {
    let Some(v) = top.get(key) else {
        return Ok(());
    };
    let n = v
        .as_f64()
        .ok_or_else(|| at(key, "Input should be a valid number"))?;
    if n < 0.0 {
        return Err(at(key, "Input should be greater than or equal to 0"));
    }
    match max {
        Some(max) if n > max => Err(at(
            key,
            &format!("Input should be less than or equal to {max}"),
        )),
        _ => Ok(()),
    }
}

/// Checks the optional parameters' types and ranges.
pub(super) fn check(top: &Map<String, Value>) -> Result<(), Rejection> {
    if top.get("stream").is_some_and(|v| !v.is_boolean()) {
        return Err(at("stream", "Input should be a valid boolean"));
    }
    number(top, "temperature", Some(1.0))?;
    number(top, "top_p", Some(1.0))?;
    if let Some(v) = top.get("top_k") {
        if v.as_u64().is_none() {
            return Err(at("top_k", "Input should be a valid integer"));
        }
    }
    if let Some(v) = top.get("stop_sequences") {
        let list = v
            .as_array()
            .ok_or_else(|| at("stop_sequences", "Input should be a valid list"))?;
        if let Some(i) = list.iter().position(|s| !s.is_string()) {
            return Err(at(
                &format!("stop_sequences.{i}"),
                "Input should be a valid string",
            ));
        }
    }
    if let Some(v) = top.get("metadata") {
        let m = object("metadata", v)?;
        only("metadata", m, &["user_id"])?;
        if !matches!(
            m.get("user_id"),
            None | Some(Value::Null) | Some(Value::String(_))
        ) {
            return Err(at("metadata.user_id", "Input should be a valid string"));
        }
    }
    if let Some(v) = top.get("service_tier") {
        if !matches!(v.as_str(), Some("auto" | "standard_only")) {
            return Err(at(
                "service_tier",
                "Input should be 'auto' or 'standard_only'",
            ));
        }
    }
    if let Some(v) = top.get("thinking") {
        let t = object("thinking", v)?;
        match t.get("type").and_then(Value::as_str) {
            Some("enabled") => {
                only("thinking.enabled", t, &["type", "budget_tokens"])?;
                if t.get("budget_tokens").and_then(Value::as_u64).is_none() {
                    return Err(at("thinking.enabled.budget_tokens", "Field required"));
                }
            }
            Some("disabled") => only("thinking.disabled", t, &["type"])?,
            _ => return Err(at("thinking", "Input tag found using 'type' does not match any of the expected tags: 'enabled', 'disabled'")),
        }
    }
    tools(top)
}

fn tools(top: &Map<String, Value>) -> Result<(), Rejection> {
    if let Some(v) = top.get("tools") {
        let list = v
            .as_array()
            .ok_or_else(|| at("tools", "Input should be a valid list"))?;
        for (i, tool) in list.iter().enumerate() {
            let p = format!("tools.{i}");
            let t = object(&p, tool)?;
            match t.get("type").and_then(Value::as_str) {
                None | Some("custom") => {
                    let p = format!("{p}.custom");
                    only(
                        &p,
                        t,
                        &[
                            "type",
                            "name",
                            "description",
                            "input_schema",
                            "cache_control",
                        ],
                    )?;
                    let name = blocks::string(&p, t, "name")?;
                    let name_ok = (1..=128).contains(&name.len()) && blocks::is_tool_id(name);
                    if !name_ok {
                        return Err(at(
                            &format!("{p}.name"),
                            "String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
                        ));
                    }
                    opt_string(&p, t, "description")?;
                    let schema_path = format!("{p}.input_schema");
                    let schema = object(
                        &schema_path,
                        t.get("input_schema")
                            .ok_or_else(|| at(&schema_path, "Field required"))?,
                    )?;
                    if schema.get("type") != Some(&json!("object")) {
                        return Err(at(
                            &format!("{schema_path}.type"),
                            "Input should be 'object'",
                        ));
                    }
                }
                // Server tools (web search, code execution...) carry their
                // own versioned types; only their name is checked.
                Some(_) => {
                    blocks::string(&p, t, "name")?;
                }
            }
        }
    }
    if let Some(v) = top.get("tool_choice") {
        let c = object("tool_choice", v)?;
        match c.get("type").and_then(Value::as_str) {
            Some(kind @ ("auto" | "any")) => only(&format!("tool_choice.{kind}"), c, &["type", "disable_parallel_tool_use"])?,
            Some("none") => only("tool_choice.none", c, &["type"])?,
            Some("tool") => {
                only("tool_choice.tool", c, &["type", "name", "disable_parallel_tool_use"])?;
                blocks::string("tool_choice.tool", c, "name")?;
            }
            _ => return Err(at("tool_choice", "Input tag found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'")),
        }
    }
    Ok(())
}
