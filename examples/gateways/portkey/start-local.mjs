// Starts the open-source Portkey gateway bound to 127.0.0.1.
//
// Why this file exists: @portkey-ai/gateway's build/start-server.js calls
// @hono/node-server's serve({ fetch, port }) without a hostname, so Node
// listens on every interface (`::`), and the gateway has no flag or
// environment variable to change that (only --port=N and --headless). This
// launcher fills in the missing host argument of net.Server#listen before it
// imports the unmodified gateway, so the port is reachable from this machine
// only.
//
// Usage:
//   PORTKEY_GATEWAY_ENTRY=.../node_modules/@portkey-ai/gateway/build/start-server.js \
//     node examples/gateways/portkey/start-local.mjs --port=8787 --headless
// PORTKEY_BIND_HOST overrides the address (default 127.0.0.1).
//
// It also raises the HTTP keep-alive timeout of the server from Node's 5 s to
// PORTKEY_KEEPALIVE_MS (default 120000): a client that reuses an idle
// connection at the instant the server closes it gets "connection reset by
// peer", which the benchmark would score as an error of the gateway.

import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const host = process.env.PORTKEY_BIND_HOST || '127.0.0.1';
const keepAliveMs = Number(process.env.PORTKEY_KEEPALIVE_MS || 120000);
const entry = process.env.PORTKEY_GATEWAY_ENTRY;
if (!entry) {
  console.error(
    'start-local.mjs: set PORTKEY_GATEWAY_ENTRY to node_modules/@portkey-ai/gateway/build/start-server.js ' +
      '(examples/gateways/compare.sh does this after installing the gateway)',
  );
  process.exit(2);
}

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  // listen(port, undefined, callback) or listen(port, callback): no host given.
  if (typeof args[0] === 'number' || typeof args[0] === 'string') {
    if (args.length >= 2 && args[1] === undefined) {
      args[1] = host;
    } else if (args.length === 1 || typeof args[1] === 'function') {
      args.splice(1, 0, host);
    }
  }
  if (typeof this.keepAliveTimeout === 'number') {
    this.keepAliveTimeout = keepAliveMs;
    this.headersTimeout = Math.max(this.headersTimeout || 0, keepAliveMs + 1000);
  }
  return listen.apply(this, args);
};

await import(pathToFileURL(path.resolve(entry)).href);
