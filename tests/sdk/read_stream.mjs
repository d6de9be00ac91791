// Reads one streamed chat completion with the official OpenAI Node SDK and
// prints, as one JSON line, what the SDK made of it: the text and the
// finish reason it returned, or the class of the error it threw.
//
// The check of continuity-bench's `openai-sdk` client profile
// (tests/it/client_profiles.rs) runs it against the harness's own
// upstreams and compares. Usage: node read_stream.mjs BASE_URL MESSAGE
// (from a directory whose node_modules holds `openai`).
import OpenAI from "openai";

const [baseURL, message] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: "sk-local-dummy", maxRetries: 0, timeout: 30000 });
let text = "";
let finish = null;
try {
  const stream = await client.chat.completions.create({
    model: "continuity-sim",
    messages: [{ role: "user", content: message }],
    stream: true,
    stream_options: { include_usage: true },
  });
  for await (const chunk of stream) {
    const choice = chunk.choices?.[0];
    if (typeof choice?.delta?.content === "string") text += choice.delta.content;
    if (choice?.finish_reason) finish = choice.finish_reason;
  }
} catch (error) {
  console.log(JSON.stringify({ raised: error?.constructor?.name ?? String(error), text }));
  process.exit(0);
}
console.log(JSON.stringify({ raised: null, text, finish_reason: finish }));
