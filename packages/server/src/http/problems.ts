import { type ErrorCode, type ErrorStatus, errorCatalogue } from '@keyturn/protocol'

/**
 * Each code's HTTP status and title: the protocol's one error catalogue (a code without an entry
 * does not compile). Add a code there, in `errorCatalogue`.
 */
export const problemByCode: Readonly<
  Record<ErrorCode, { readonly status: ErrorStatus; readonly title: string }>
> = errorCatalogue

/** Every problem response an operation may give, for route schemas: `{ 400: ProblemSchema, … }`. */
export function statusesOf(codes: readonly ErrorCode[]): ErrorStatus[] {
  return [...new Set(codes.map((code) => problemByCode[code].status))]
}
