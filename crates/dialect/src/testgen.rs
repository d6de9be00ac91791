//! Seeded generator of awkward OpenAI chat requests for the dialect
//! property tests: several system (and developer) messages, some in the
//! middle; consecutive user and assistant messages; multi-part content with
//! images; tool calls with results (shuffled, interleaved with user text,
//! missing, orphaned); conversations that start with the assistant or end
//! with it; and a spread of parameters. Every text is unique, so that what
//! survived can be told by content.

use cb_base::seed;
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};

/// Tool names the generator calls (one starts with a digit, which Gemini
/// must rename).
const TOOLS: [&str; 4] = ["get_weather", "lookup_contact", "search-notes", "3d_render"];

/// Words to make texts from.
const WORDS: [&str; 12] = [
    "garden", "ticket", "Oriane", "lantern", "Tuesday", "violin", "harbour", "pepper", "orbit",
    "maple", "ledger", "quartz",
];

struct Gen {
    rng: ChaCha8Rng,
    n: usize,
}

impl Gen {
    fn text(&mut self, kind: &str) -> String {
        self.n += 1;
        let a = WORDS[self.rng.random_range(0..WORDS.len())];
        let b = WORDS[self.rng.random_range(0..WORDS.len())];
        format!("{kind} {} about the {a} and the {b}.", self.n)
    }

    fn chance(&mut self, p: f64) -> bool {
        self.rng.random_bool(p)
    }

    fn user_content(&mut self) -> Value {
        let text = self.text("User turn");
        match self.rng.random_range(0..20) {
            0..=11 => json!(text),
            12..=14 => json!([{"type": "text", "text": text}]),
            15..=16 => {
                json!([{"type": "text", "text": text}, {"type": "text", "text": self.text("Second part")}])
            }
            17..=18 => {
                json!([{"type": "text", "text": text}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}])
            }
            _ => {
                json!([{"type": "image_url", "image_url": {"url": "https://example.com/photo.jpg"}}, {"type": "text", "text": text}])
            }
        }
    }

    fn system(&mut self) -> Value {
        let role = if self.chance(0.2) {
            "developer"
        } else {
            "system"
        };
        json!({"role": role, "content": self.text("System rule")})
    }

    fn assistant_text(&mut self) -> Value {
        json!({"role": "assistant", "content": self.text("Assistant reply")})
    }

    /// An assistant message with tool calls, then its results in some
    /// order, perhaps with user text among them, one perhaps missing.
    fn tool_round(&mut self, out: &mut Vec<Value>) {
        let calls: Vec<(String, &str)> = (0..self.rng.random_range(1..=3))
            .map(|_| {
                self.n += 1;
                let sep = if self.chance(0.2) { "." } else { "_" };
                (
                    format!("call{sep}{}", self.n),
                    TOOLS[self.rng.random_range(0..TOOLS.len())],
                )
            })
            .collect();
        let tool_calls: Vec<Value> = calls
            .iter()
            .map(|(id, name)| {
                let arguments = if self.chance(0.05) {
                    "not json".to_string()
                } else {
                    json!({"q": self.text("Query")}).to_string()
                };
                json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
            })
            .collect();
        let content = if self.chance(0.5) {
            Value::Null
        } else {
            json!(self.text("Calling tools"))
        };
        out.push(json!({"role": "assistant", "content": content, "tool_calls": tool_calls}));
        let mut results = Vec::new();
        for (id, _) in &calls {
            if !self.chance(0.1) {
                results.push(json!({"role": "tool", "tool_call_id": id, "content": self.text("Tool result")}));
            }
        }
        if self.chance(0.3) {
            results.shuffle(&mut self.rng);
        }
        if self.chance(0.1) {
            let at = self.rng.random_range(0..=results.len());
            let user = json!({"role": "user", "content": self.user_content()});
            results.insert(at, user);
        }
        if self.chance(0.05) {
            results.push(json!({"role": "tool", "tool_call_id": "call_unknown", "content": self.text("Orphan result")}));
        }
        out.extend(results);
        if self.chance(0.7) {
            out.push(self.assistant_text());
        }
    }

    fn messages(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        if self.chance(0.8) {
            for _ in 0..self.rng.random_range(1..=2) {
                out.push(self.system());
            }
        }
        if self.chance(0.1) {
            out.push(self.assistant_text());
        }
        for _ in 0..self.rng.random_range(1..=6) {
            if self.chance(0.2) {
                out.push(self.system());
            }
            out.push(json!({"role": "user", "content": self.user_content()}));
            if self.chance(0.15) {
                out.push(json!({"role": "user", "content": self.user_content()}));
            }
            if self.chance(0.3) {
                self.tool_round(&mut out);
            } else {
                out.push(self.assistant_text());
                if self.chance(0.1) {
                    out.push(self.assistant_text());
                }
                if self.chance(0.05) {
                    out.push(json!({"role": "assistant", "content": ""}));
                }
            }
        }
        if self.chance(0.85) {
            out.push(json!({"role": "user", "content": self.user_content()}));
        }
        out
    }

    fn tools(&mut self) -> Value {
        let defs: Vec<Value> = TOOLS
            .iter()
            .map(|name| {
                let mut params = json!({"type": "object", "properties": {"q": {"type": "string", "description": "query"}}, "required": ["q"]});
                if self.chance(0.5) {
                    params["additionalProperties"] = json!(false);
                }
                json!({"type": "function", "function": {"name": name, "description": "A tool.", "parameters": params}})
            })
            .collect();
        Value::Array(defs)
    }
}

/// The `index`-th generated request under `master`.
pub(crate) fn request(master: u64, index: u64) -> Value {
    let mut g = Gen {
        rng: seed::rng(master, "dialect-roundtrip", index),
        n: 0,
    };
    let mut body = json!({"model": "gpt-client", "messages": g.messages()});
    if g.chance(0.5) {
        body["max_tokens"] = json!(g.rng.random_range(1..2000));
    }
    if g.chance(0.5) {
        body["temperature"] = json!(g.rng.random_range(0.0..2.0));
    }
    if g.chance(0.3) {
        body["top_p"] = json!(0.9);
    }
    if g.chance(0.3) {
        body["stop"] = json!(["\n\nUser:", "END"]);
    }
    if g.chance(0.5) {
        body["stream"] = json!(true);
        body["stream_options"] = json!({"include_usage": true});
    }
    if g.chance(0.2) {
        body["seed"] = json!(7);
    }
    if g.chance(0.2) {
        body["user"] = json!("user-1");
    }
    if g.chance(0.5) {
        body["tools"] = g.tools();
        let choices = [
            json!("auto"),
            json!("required"),
            json!("none"),
            json!({"type": "function", "function": {"name": "get_weather"}}),
        ];
        if g.chance(0.5) {
            body["tool_choice"] = choices[g.rng.random_range(0..choices.len())].clone();
        }
        if g.chance(0.3) {
            body["parallel_tool_calls"] = json!(false);
        }
    }
    if g.chance(0.1) {
        body["response_format"] = json!({"type": "json_schema", "json_schema": {"name": "answer", "schema": {"type": "object", "properties": {"answer": {"type": "string"}}, "additionalProperties": false}}});
    }
    body
}
