//! The client's function tools, read once for every dialect: the OpenAI
//! `tools` array gives each provider translation the same list (name,
//! description, parameters), and a tool that is not a function is noted as
//! dropped the same way whichever provider it was bound for.

use crate::Note;
use serde_json::{Map, Value};

/// One OpenAI function tool of the request, as the client wrote it.
pub struct FunctionTool<'a> {
    /// Its place in the request's `tools` array (for notes).
    pub index: usize,
    pub name: &'a str,
    pub description: Option<&'a str>,
    /// `function.parameters`, as sent (any JSON value).
    pub parameters: Option<&'a Value>,
}

/// The request's function tools in order; every other entry of `tools` is
/// noted as a dropped parameter and left out.
pub fn function_tools<'a>(
    top: &'a Map<String, Value>,
    notes: &mut Vec<Note>,
) -> Vec<FunctionTool<'a>> {
    let mut out = Vec::new();
    for (index, tool) in top
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let function = tool
            .get("function")
            .filter(|_| tool.get("type").and_then(Value::as_str) == Some("function"));
        let Some(name) = function.and_then(|f| f.get("name")).and_then(Value::as_str) else {
            notes.push(Note::DroppedParameter {
                name: format!("tools[{index}] (not a function tool)"),
            });
            continue;
        };
        out.push(FunctionTool {
            index,
            name,
            description: function
                .and_then(|f| f.get("description"))
                .and_then(Value::as_str),
            parameters: function.and_then(|f| f.get("parameters")),
        });
    }
    out
}
