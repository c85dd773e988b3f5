import { endOfDayUtc } from '@keyturn/protocol'
import type { Static, TSchema } from 'typebox'
import { Check, Errors } from 'typebox/value'
import { UsageError } from './errors.js'

/**
 * What is wrong with `value` under `schema`, one line per field: `--max-activations must be integer
 * or null`. `names` maps a field to what the user typed (a flag, a column); unknown fields are named.
 */
export function describeProblems(
  schema: TSchema,
  value: unknown,
  names: Readonly<Record<string, string>> = {},
  nullWords: Readonly<Record<string, string>> = {},
): string[] {
  const byField = new Map<string, Set<string>>()
  const add = (field: string, problem: string) => {
    byField.set(field, (byField.get(field) ?? new Set()).add(problem))
  }
  for (const error of Errors(schema, value)) {
    const params = error.params as {
      additionalProperties?: readonly string[]
      allowedValues?: readonly unknown[]
    } // TypeBox's error parameters
    if (error.keyword === 'additionalProperties') {
      for (const field of params.additionalProperties ?? []) {
        add(field, 'is not a known field')
      }
    } else if (error.keyword === 'enum' && params.allowedValues !== undefined) {
      add(error.instancePath.slice(1), `must be one of ${params.allowedValues.join(', ')}`)
    } else if (error.keyword !== 'boolean' && error.keyword !== 'anyOf') {
      add(error.instancePath.slice(1), error.message)
    }
  }
  return [...byField].map(([field, problems]) => {
    const text = joinAlternatives([...problems])
    const word = nullWords[field]
    return `${names[field] ?? field} ${word === undefined ? text : text.replace(/\bnull$/, `"${word}"`)}`
  })
}

/** ["must be integer", "must be null"] as "must be integer or null". */
function joinAlternatives(problems: readonly string[]): string {
  const [first, ...rest] = problems
  return [first, ...rest.map((problem) => problem.replace(/^must be /, ''))].join(' or ')
}

/** `value` if it matches `schema`, else a usage error (exit 2) naming each problem. */
export function checked<T extends TSchema>(
  schema: T,
  value: unknown,
  names: Readonly<Record<string, string>> = {},
  nullWords: Readonly<Record<string, string>> = {},
): Static<T> {
  if (Check(schema, value)) {
    return value
  }
  throw new UsageError(
    describeProblems(schema, value, names, nullWords).join('; ') || 'the options are not valid',
  )
}

/** `"12"` as 12; anything else as typed, for the schema check to name. */
export function integer(text: string): number | string {
  return /^-?\d+$/.test(text) ? Number(text) : text
}

/**
 * A date flag's value as the API takes it: a plain date (`2031-01-01`) is the end of that day in
 * UTC (`2031-01-01T23:59:59.999Z`, the rule of `endOfDayUtc` that the dashboard shares); anything
 * else as typed, for the schema check to name.
 */
export function dateTime(text: string): string {
  return endOfDayUtc(text) ?? text
}

/** `null` for the word that means none (`unlimited`, `never`), else `parse(text)`. */
export function orNull<T>(text: string, word: string, parse: (text: string) => T): T | null {
  return text === word ? null : parse(text)
}

/** A JSON option's value, or a usage error naming the flag. */
export function json(text: string, flag: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    throw new UsageError(`${flag} must be JSON, e.g. '{"plan":"pro"}'`)
  }
}

/** Only the defined members: an absent flag must be absent from the body, not `undefined`. */
export function defined<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T> // the same members, minus the undefined ones
}

/** Commander's collector for a repeatable option (`--metadata a=1 --metadata b=2`). */
export function collect(value: string, previous: readonly string[] = []): string[] {
  return [...previous, value]
}

/**
 * `--metadata key=value` flags as a metadata object: values are strings; `key=` (nothing after the
 * `=`) removes the key on update. Undefined when no flag was given.
 */
export function metadataFlags(
  values: readonly string[] | undefined,
): Record<string, string | null> | undefined {
  if (values === undefined || values.length === 0) {
    return undefined
  }
  const metadata: Record<string, string | null> = {}
  for (const value of values) {
    const equals = value.indexOf('=')
    if (equals <= 0) {
      throw new UsageError(`--metadata takes key=value (key= to remove a key), not "${value}"`)
    }
    const text = value.slice(equals + 1)
    metadata[value.slice(0, equals)] = text === '' ? null : text
  }
  return metadata
}

/**
 * `--entitlement CODE` (repeatable) or `--no-entitlements` (an empty set: commander sets
 * `entitlements` to false) as the body's `entitlements`; undefined when neither was given.
 */
export function entitlementFlags(options: {
  readonly entitlement?: readonly string[]
  readonly entitlements?: boolean
}): string[] | undefined {
  if (options.entitlements === false) {
    if (options.entitlement !== undefined) {
      throw new UsageError('Give --entitlement or --no-entitlements, not both')
    }
    return []
  }
  return options.entitlement === undefined ? undefined : [...options.entitlement]
}
