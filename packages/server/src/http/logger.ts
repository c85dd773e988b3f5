import type { FastifyServerOptions } from 'fastify'
import type { Principal } from '../core/principal.js'
import type { App } from './app-types.js'

type LoggerOptions = Exclude<FastifyServerOptions['logger'], boolean | undefined>

/**
 * Fastify's pino options for `serve`: JSON lines on stdout at `level`. Headers are not logged by
 * default; the redaction is the safety net if a serializer or a log call ever includes them.
 */
export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie'],
      censor: '[redacted]',
    },
  }
}

/**
 * One log line per request, when its answer is sent (Fastify's own two lines, on arrival and on
 * completion, are turned off in app.ts's `logController`): method, route pattern (never the URL: it
 * may carry filters), status, duration, the request id (`reqId`, from the request's logger) and
 * the id of the API key that made it, never its secret. Routes with a higher `logLevel` (probes,
 * scrapes) log nothing while all is well.
 */
export function registerRequestLog(app: App): void {
  const aboveInfo = new Set(['warn', 'error', 'fatal', 'silent'])
  app.addHook('onResponse', (request, reply, done) => {
    if (aboveInfo.has(request.log.level)) {
      done() // LOG_LEVEL=warn or above: not even the line's object is built
      return
    }
    request.log.info(
      {
        method: request.method,
        route: request.routeOptions.url ?? 'unmatched',
        status: reply.statusCode,
        durationMs: Math.round(reply.elapsedTime * 100) / 100,
        // Unset when the request was refused before authentication succeeded.
        apiKeyId: (request.principal as Principal | undefined)?.apiKeyId,
        operatorId: (request.principal as Principal | undefined)?.operator?.id,
      },
      'request completed',
    )
    done()
  })
}
