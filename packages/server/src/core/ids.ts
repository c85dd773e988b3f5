import { randomBytes } from 'node:crypto'

/** The one table of id prefixes: ids say what they name, in logs and support tickets. */
const idPrefixes = {
  product: 'prd_',
  license: 'lic_',
  activation: 'act_',
  apiKey: 'key_',
  request: 'req_',
  token: 'tok_',
  event: 'evt_',
  webhookEndpoint: 'whk_',
  webhookDelivery: 'dlv_',
  mail: 'mail_',
  customer: 'cus_',
  policy: 'pol_',
  entitlement: 'ent_',
  signInCode: 'sic_',
  transfer: 'trf_',
  operator: 'opr_',
  operatorToken: 'otk_',
  integration: 'int_',
} as const

type IdKind = keyof typeof idPrefixes
export type IdOf<K extends IdKind> = `${(typeof idPrefixes)[K]}${string}`

const base62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

// Random bytes are drawn from a pool refilled 4 KiB at a time: one randomBytes call per request id
// cost more than the rest of making it (the benchmark's profile).
const poolSize = 4096
let pool = randomBytes(poolSize)
let poolOffset = 0

function nextRandomByte(): number {
  if (poolOffset === poolSize) {
    pool = randomBytes(poolSize)
    poolOffset = 0
  }
  return pool[poolOffset++] ?? 0
}

/** `length` base62 characters; 22 of them carry about 131 random bits. */
function randomBase62(length: number): string {
  let out = ''
  while (out.length < length) {
    const byte = nextRandomByte()
    // 248 = 4 * 62: rejecting the rest keeps every character equally likely.
    if (byte < 248) {
      out += base62[byte % 62]
    }
  }
  return out
}

/**
 * An id: the prefix, then 22 base62 characters: 8 of the time in milliseconds, then 14 random
 * (about 83 bits; ids name things, they grant nothing: keys and secrets are wholly random). Time
 * first puts each new row's id at the end of its primary-key B-tree, and of every index on it
 * (events.request_id, events.license_id), instead of at a random leaf that must be read and
 * rewritten: on SQLite an event row cost 77 µs with random request and license ids and 27 µs with
 * these (docs/decisions/0024-time-ordered-ids.md). The base62 digits are in ASCII order,
 * so the ids sort by time bytewise; the price is that an id tells when it was made, as ULIDs and
 * UUIDv7 do.
 */
export function newId<K extends IdKind>(kind: K, at: number = Date.now()): IdOf<K> {
  return `${idPrefixes[kind]}${base62Time(at)}${randomBase62(14)}` as IdOf<K>
}

/** `ms` as 8 base62 digits (enough until the year 8000). */
function base62Time(ms: number): string {
  let out = ''
  for (let rest = ms, i = 0; i < 8; i++) {
    out = base62[rest % 62] + out
    rest = Math.floor(rest / 62)
  }
  return out
}

const crockford = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

/** 25 Crockford base32 characters (125 random bits) in five dash groups (docs/decisions/0001-licenses.md). */
export function newLicenseKey(): string {
  const bytes = randomBytes(16)
  let bits = 0n
  for (const byte of bytes) {
    bits = (bits << 8n) | BigInt(byte)
  }
  let chars = ''
  for (let i = 0; i < 25; i++) {
    chars += crockford[Number(bits & 31n)]
    bits >>= 5n
  }
  return chars.match(/.{5}/g)?.join('-') ?? chars
}

/**
 * Input shaped like a Keyturn key: 25 characters of Crockford base32 or its look-alikes (O, I, L),
 * in any case, in five groups of five with or without dashes between them.
 */
const keyturnKeyShape = /^[0-9A-TV-Z]{5}(?:-?[0-9A-TV-Z]{5}){4}$/i
/** A key exactly as Keyturn stores it. */
const storedKeyShape = /^[0-9A-HJKMNP-TV-Z]{5}(?:-[0-9A-HJKMNP-TV-Z]{5}){4}$/

/**
 * Reads a key as a person may type it: any case, with or without its dashes, and the look-alikes
 * Crockford base32 leaves out (O for 0, I and L for 1), into the form Keyturn stores
 * (`7K3QD-M9XTB-2VHCR-8PNWF-4ZJ6A`). Only input shaped like a Keyturn key is rewritten; anything
 * else is looked up as given (surrounding spaces aside), so no other text is turned into a key.
 */
export function normalizeLicenseKey(input: string): string {
  if (storedKeyShape.test(input)) {
    return input // what applications send: no rewrite on the validation path
  }
  const trimmed = input.trim()
  if (!keyturnKeyShape.test(trimmed)) {
    return trimmed
  }
  const chars = trimmed.replaceAll('-', '').toUpperCase().replace(/O/g, '0').replace(/[IL]/g, '1')
  return `${chars.slice(0, 5)}-${chars.slice(5, 10)}-${chars.slice(10, 15)}-${chars.slice(15, 20)}-${chars.slice(20)}`
}

/** A bearer secret: readable prefix plus 32 random base62 characters (about 190 bits). */
export function newApiKeySecret(prefix: string): string {
  return `${prefix}${randomBase62(32)}`
}

const lowerBase32 = '0123456789abcdefghjkmnpqrstvwxyz' // sorts the same under C and linguistic collations

function base32(value: bigint, length: number): string {
  let out = ''
  for (let i = 0; i < length; i++) {
    out = lowerBase32[Number(value & 31n)] + out
    value >>= 5n
  }
  return out
}

let lastEventTime = -1
let lastEventTail = 0n

/**
 * An event id (`evt_` + 22 characters) that sorts by `at` and, within one millisecond of one process,
 * by creation (a ULID's monotonic scheme): lists ordered by `occurredAt` then id keep the order in
 * which a process recorded its events. 10 characters of time, then 60 random bits.
 */
export function newEventId(at: Date): IdOf<'event'> {
  const time = Math.max(at.getTime(), lastEventTime)
  if (time === lastEventTime) {
    lastEventTail = (lastEventTail + 1n) & ((1n << 60n) - 1n)
  } else {
    lastEventTime = time
    lastEventTail = BigInt(`0x${randomBytes(8).toString('hex')}`) >> 5n // 59 bits: room to count up
  }
  return `${idPrefixes.event}${base32(BigInt(time), 10)}${base32(lastEventTail, 12)}`
}
