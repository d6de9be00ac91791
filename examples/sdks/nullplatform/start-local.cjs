// Starts the unmodified @nullplatform/llm-gateway bound to 127.0.0.1.
//
// Its GatewayServer calls app.listen(port) without a host, so Node listens on
// every interface, whatever server.host says. This fills in the host argument
// of listen (NULLPLATFORM_BIND_HOST, default 127.0.0.1), raises Node's 5 s
// keep-alive timeout to 120 s (a client reusing an idle connection at that
// instant gets a reset), then runs the package's own CLI:
//   NULLPLATFORM_GATEWAY_ENTRY=.../node_modules/@nullplatform/llm-gateway/dist/cli.js \
//     node start-local.cjs --config gateway.yaml
const http = require('node:http')
const host = process.env.NULLPLATFORM_BIND_HOST || '127.0.0.1'
const listen = http.Server.prototype.listen
http.Server.prototype.listen = function (port, ...rest) {
  this.keepAliveTimeout = 120_000
  if ((typeof port === 'number' || typeof port === 'string') && typeof rest[0] !== 'string') {
    return listen.call(this, Number(port), host, ...rest)
  }
  return listen.call(this, port, ...rest)
}
const entry = process.env.NULLPLATFORM_GATEWAY_ENTRY
if (!entry) throw new Error('set NULLPLATFORM_GATEWAY_ENTRY to .../@nullplatform/llm-gateway/dist/cli.js')
process.argv = [process.argv[0], entry, 'start', ...process.argv.slice(2)]
require(entry)
