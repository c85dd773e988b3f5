import { type ErrorCode, ProblemSchema } from '@keyturn/protocol'
import type { TSchema } from 'typebox'
import { problemByCode } from './problems.js'

/**
 * The problem responses of an operation, for its route schema: every authenticated route can
 * answer 400 `validation_failed` and 401; each route adds the codes its service throws.
 */
export function problemResponses(...codes: ErrorCode[]): Record<number, TSchema> {
  const byStatus = new Map<number, ErrorCode[]>()
  for (const code of ['validation_failed', 'unauthenticated', ...codes] as const) {
    const { status } = problemByCode[code]
    byStatus.set(status, [...(byStatus.get(status) ?? []), code])
  }
  return Object.fromEntries(
    [...byStatus].map(([status, shared]) => [
      status,
      {
        ...ProblemSchema,
        description: `Problem details with \`code\` ${shared.map((code) => `\`${code}\``).join(' or ')}`,
      },
    ]),
  )
}
