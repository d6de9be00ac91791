// continuity-bench shim: Vercel AI SDK (`ai`) + `ai-fallback` over two
// OpenAI-compatible providers (@ai-sdk/openai-compatible).
//
// Failover as an application does it with the AI SDK: two providers, one per
// upstream, wrapped once at start-up in ai-fallback's createFallback({models:
// [primary, fallback]}), and generateText / streamText called with the whole
// `messages` history converted to the SDK's ModelMessage type. The shim adds
// no retry, cache or failover of its own. SDK defaults: generateText and
// streamText retry retryable errors maxRetries=2 times (2 s, 4 s backoff, or
// Retry-After under 60 s) around the fallback model; ai-fallback switches
// model on 401, 403, 408, 409, 413, 429, >=500 and on error messages naming
// overload, rate limits or timeouts, and stays on the fallback until
// modelResetInterval (3 min) has passed; fetch has no timeout of its own.
//
// Environment:
//   SHIM_PORT (8102)                              port on 127.0.0.1
//   SHIM_PRIMARY_URL, SHIM_FALLBACK_URL           base URLs, e.g. http://127.0.0.1:9001/v1 (required)
//   SHIM_PRIMARY_MODEL (continuity-sim), SHIM_FALLBACK_MODEL (continuity-sim-fallback)
//   SHIM_API_KEY (sk-local-dummy)
//   SHIM_MAX_RETRIES                              generateText/streamText maxRetries when set
//   SHIM_MODEL_RESET_MS                           createFallback modelResetInterval when set
//   SHIM_PRIMARY_TIMEOUT_MS, SHIM_FALLBACK_TIMEOUT_MS   when set: a custom fetch for that
//       provider aborts an attempt with no response headers after that many ms (the
//       platform's TimeoutError, "The operation was aborted due to timeout")
//
// POST /v1/chat/completions -> generateText (or streamText when stream: true);
// the result as chat.completion JSON, or SSE chunks ending with data: [DONE].
// An error -> the upstream status when the SDK exposes one (APICallError.
// statusCode, or RetryError.lastError's), 504 for a TimeoutError/AbortError,
// else 502; body {"error": {"type": <error class>, ...}}. GET /health -> 200.
import http from 'node:http'
import { randomUUID } from 'node:crypto'
import { generateText, streamText, Output, jsonSchema } from 'ai'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { createFallback } from 'ai-fallback'

const env = process.env
const num = (v) => (v ? Number(v) : undefined)

// Only when a timeout is configured: abort an attempt whose headers have not come.
function headersTimeoutFetch(ms) {
  if (!ms) return undefined // the SDK's default: globalThis.fetch, no timeout
  return async (url, init = {}) => {
    const ctl = new AbortController()
    const timer = setTimeout(
      () => ctl.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms)
    const signal = init.signal ? AbortSignal.any([init.signal, ctl.signal]) : ctl.signal
    try { return await fetch(url, { ...init, signal }) } finally { clearTimeout(timer) }
  }
}

function provider(name, url, timeoutMs) {
  return createOpenAICompatible({
    name, baseURL: url, apiKey: env.SHIM_API_KEY || 'sk-local-dummy',
    includeUsage: true, supportsStructuredOutputs: true, fetch: headersTimeoutFetch(timeoutMs),
  })
}

const primary = provider('primary', env.SHIM_PRIMARY_URL, num(env.SHIM_PRIMARY_TIMEOUT_MS))
const fallback = provider('fallback', env.SHIM_FALLBACK_URL, num(env.SHIM_FALLBACK_TIMEOUT_MS))
const model = createFallback({
  models: [primary(env.SHIM_PRIMARY_MODEL || 'continuity-sim'),
    fallback(env.SHIM_FALLBACK_MODEL || 'continuity-sim-fallback')],
  modelResetInterval: num(env.SHIM_MODEL_RESET_MS),
  onError: (error, modelId) => console.error(`ai-fallback: ${modelId} failed: ${error?.message}`),
})

// OpenAI messages -> AI SDK ModelMessage (text only).
const text = (c) => (typeof c === 'string' ? c : (c || []).map((p) => p.text ?? '').join(''))
function toModelMessages(messages) {
  return messages.map((m) => {
    if (m.role === 'system' || m.role === 'developer') return { role: 'system', content: text(m.content) }
    if (m.role === 'user' || m.role === 'assistant') {
      return { role: m.role, content: typeof m.content === 'string' ? m.content : text(m.content) }
    }
    throw Object.assign(new Error(`unsupported message role ${m.role}`), { name: 'UnsupportedMessage', statusCode: 400 })
  })
}

// OpenAI request fields -> generateText/streamText settings; anything else is sent as is
// through providerOptions (the openai-compatible provider copies unknown keys into the body).
function callSettings(req) {
  const mapped = {
    temperature: 'temperature', top_p: 'topP', max_tokens: 'maxOutputTokens',
    max_completion_tokens: 'maxOutputTokens', seed: 'seed', presence_penalty: 'presencePenalty',
    frequency_penalty: 'frequencyPenalty',
  }
  const s = { messages: toModelMessages(req.messages || []), allowSystemInMessages: true }
  const extra = {}
  for (const [k, v] of Object.entries(req)) {
    if (mapped[k]) s[mapped[k]] = v
    else if (k === 'stop') s.stopSequences = Array.isArray(v) ? v : [v]
    else if (k === 'response_format') {
      if (v?.type === 'json_schema') {
        s.output = Output.object({ schema: jsonSchema(v.json_schema.schema), name: v.json_schema.name })
      } else if (v?.type === 'json_object') s.output = Output.json()
    } else if (!['model', 'messages', 'stream', 'stream_options', 'user'].includes(k)) extra[k] = v
  }
  s.providerOptions = { openaiCompatible: { user: req.user }, primary: extra, fallback: extra }
  if (env.SHIM_MAX_RETRIES) s.maxRetries = Number(env.SHIM_MAX_RETRIES)
  return s
}

function errorBody(err) {
  const cause = err?.lastError ?? err // RetryError wraps the last attempt's error
  // An error status only: a 200 whose body broke off ("Failed to process successful response") is a 502.
  let status = cause?.statusCode
  if (!(Number.isInteger(status) && status >= 400)) {
    status = ['TimeoutError', 'AbortError'].includes(cause?.name) ? 504 : 502
  }
  let upstream
  try { upstream = cause?.responseBody ? JSON.parse(cause.responseBody) : undefined } catch { upstream = cause.responseBody }
  return [status, { error: { // code first: a client that shows only the start of the body still sees it
    code: upstream?.error?.code, type: err?.constructor?.name ?? 'Error', name: err?.name,
    message: String(err?.message ?? err), upstream, shim: 'ai-fallback-node',
  } }]
}

const FINISH = { 'content-filter': 'content_filter', 'tool-calls': 'tool_calls' }
const finishReason = (raw, unified) => raw ?? FINISH[unified] ?? unified
const usage = (u) => u && u.inputTokens !== undefined &&
  { prompt_tokens: u.inputTokens, completion_tokens: u.outputTokens, total_tokens: u.totalTokens }

function sendJson(res, status, obj) {
  const body = JSON.stringify(obj)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
  res.end(body)
}

async function complete(req, res) {
  const settings = callSettings(req)
  if (!req.stream) {
    const r = await generateText({ model, ...settings })
    if (settings.output) void r.output // as an application would: the SDK parses and checks it
    return sendJson(res, 200, {
      id: r.response.id ?? `chatcmpl-${randomUUID()}`, object: 'chat.completion',
      created: Math.floor(Date.now() / 1000), model: r.response.modelId,
      choices: [{ index: 0, message: { role: 'assistant', content: r.text },
        finish_reason: finishReason(r.rawFinishReason, r.finishReason) }],
      ...(usage(r.usage) ? { usage: usage(r.usage) } : {}),
    })
  }
  const parts = streamText({ model, ...settings, onError: () => {} }).fullStream[Symbol.asyncIterator]()
  const id = `chatcmpl-${randomUUID()}`
  let modelId = ''
  const chunk = (delta, finish = null, u) => `data: ${JSON.stringify({
    id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: modelId,
    choices: u ? [] : [{ index: 0, delta, finish_reason: finish }], ...(u ? { usage: u } : {}),
  })}\n\n`
  // Headers wait for the first text (or the end): an error before it gets an HTTP status.
  let started = false
  for (let p = await parts.next(); !p.done; p = await parts.next()) {
    const part = p.value
    if (part.type === 'error') {
      if (!started) throw part.error
      res.end(`data: ${JSON.stringify(errorBody(part.error)[1])}\n\n`) // no [DONE]
      return
    }
    if (part.type === 'finish-step') modelId = part.response?.modelId ?? modelId
    if ((part.type === 'text-delta' || part.type === 'finish') && !started) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      started = true
    }
    if (part.type === 'text-delta' && part.text) res.write(chunk({ role: 'assistant', content: part.text }))
    if (part.type === 'finish') {
      res.write(chunk({}, finishReason(part.rawFinishReason, part.finishReason)))
      if (usage(part.totalUsage)) res.write(chunk(null, null, usage(part.totalUsage)))
      res.end('data: [DONE]\n\n')
      return
    }
  }
  if (!started) res.writeHead(200, { 'content-type': 'text/event-stream' })
  res.end() // the SDK's stream ended without a finish part: no [DONE]
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && ['/health', '/v1/health'].includes(req.url)) {
    return sendJson(res, 200, { status: 'ok', shim: 'ai-fallback-node' })
  }
  if (req.method !== 'POST' || req.url.replace(/\/$/, '') !== '/v1/chat/completions') {
    return sendJson(res, 404, { error: { message: 'not found', type: 'NotFound' } })
  }
  let body = ''
  req.on('data', (d) => { body += d })
  req.on('end', async () => {
    let parsed
    try { parsed = JSON.parse(body) } catch (e) { return sendJson(res, 400, { error: { message: e.message, type: 'SyntaxError' } }) }
    try {
      await complete(parsed, res)
    } catch (err) {
      if (res.headersSent) res.end()
      else sendJson(res, ...errorBody(err))
    }
  })
})
server.keepAliveTimeout = 120_000 // Node's 5 s default races the driver's idle connections
server.listen(Number(env.SHIM_PORT || 8102), '127.0.0.1', () => {
  console.log(`ai-fallback-node shim on http://127.0.0.1:${server.address().port}: ` +
    `${env.SHIM_PRIMARY_URL} -> fallback ${env.SHIM_FALLBACK_URL}`)
})
