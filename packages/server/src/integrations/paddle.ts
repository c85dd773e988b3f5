import { createHmac, timingSafeEqual } from 'node:crypto'

/**
 * Paddle Billing webhooks (developer.paddle.com/webhooks/signature-verification): the
 * `Paddle-Signature` header is `ts=<unix seconds>;h1=<hex>`, with several `h1` while a secret is
 * rotated; `h1` is the HMAC-SHA256 of `<ts>:<raw body>` under the notification destination's secret
 * key. Checked here by that algorithm at the server's clock (the SDK reads the system clock), with
 * the SDK's tolerance of 5 seconds.
 */
const toleranceSeconds = 5

export type PaddleVerification =
  | { readonly ok: true; readonly eventType: string; readonly dedupeKey: string; readonly body: unknown }
  | { readonly ok: false; readonly problem: 'signature' | 'malformed'; readonly reason: string }

export function verifyPaddle(
  rawBody: Buffer,
  header: string | undefined,
  secret: string,
  now: Date,
): PaddleVerification {
  const parts = new Map<string, string[]>()
  for (const part of (header ?? '').split(';')) {
    const [name, value] = part.split('=', 2)
    if (name !== undefined && value !== undefined) {
      parts.set(name.trim(), [...(parts.get(name.trim()) ?? []), value.trim()])
    }
  }
  const ts = parts.get('ts')?.[0]
  const signatures = parts.get('h1') ?? []
  if (ts === undefined || !/^\d{1,12}$/.test(ts) || signatures.length === 0) {
    return { ok: false, problem: 'signature', reason: 'No valid Paddle-Signature header (ts=…;h1=…).' }
  }
  if (Math.abs(Math.floor(now.getTime() / 1000) - Number(ts)) > toleranceSeconds) {
    return {
      ok: false,
      problem: 'signature',
      reason: 'The signature’s timestamp is outside the 5-second tolerance.',
    }
  }
  const expected = createHmac('sha256', secret).update(`${ts}:`).update(rawBody).digest()
  const matches = signatures.some(
    (signature) =>
      /^[0-9a-f]{64}$/i.test(signature) && timingSafeEqual(expected, Buffer.from(signature, 'hex')),
  )
  if (!matches) {
    return { ok: false, problem: 'signature', reason: 'No h1 signature matches the body.' }
  }
  let body: unknown
  try {
    body = JSON.parse(rawBody.toString('utf8'))
  } catch {
    return { ok: false, problem: 'malformed', reason: 'The body is not JSON.' }
  }
  const { event_id: eventId, event_type: eventType } = (body ?? {}) as {
    event_id?: unknown
    event_type?: unknown
  }
  if (
    typeof eventId !== 'string' ||
    typeof eventType !== 'string' ||
    eventId.length > 100 ||
    eventType.length > 100
  ) {
    return {
      ok: false,
      problem: 'malformed',
      reason: 'The body is not a Paddle event (no event_id or event_type).',
    }
  }
  return { ok: true, eventType, dedupeKey: eventId, body }
}
