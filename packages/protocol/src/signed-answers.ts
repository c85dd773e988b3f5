/**
 * @module Signed answers (anti-spoofing): the application-facing routes echo a request's `nonce` and,
 * when asked (`Keyturn-Sign: ed25519`) or when the product has `signResponses`, sign the answer as an
 * RFC 9421 HTTP Message Signature over an RFC 9530 `Content-Digest`, with the product's current
 * signing key (the one its license tokens are signed with). Server and client build the signature
 * base here, so both read it the same way; any RFC 9421 library verifies it too.
 */
import { Type } from 'typebox'

export const maxNonceLength = 128

export const NonceSchema = Type.String({
  minLength: 1,
  maxLength: maxNonceLength,
  description:
    'Any value chosen by the caller (a fresh random one per request), returned in the answer, so a signed answer cannot be replayed for another request.',
  examples: ['6f1c0e9a4b2d8e7f3a5c9b1d0e2f4a6c'],
})

/** The request header that asks for a signed answer; `ed25519` is the one algorithm. */
export const signRequestHeader = 'Keyturn-Sign'
export const signAlgorithm = 'ed25519'
/** The signature's label in `Signature-Input` and `Signature`. */
export const signatureLabel = 'keyturn'
/** The covered components, in order: the answer's status, digest and date, the request's method and path. */
export const answerCoveredComponents = '("@status" "content-digest" "date" "@method";req "@path";req)'

/** The `Signature-Input` member's value (and the `@signature-params` line of the base). */
export function answerSignatureParams(created: number, keyId: string): string {
  return `${answerCoveredComponents};created=${created};keyid="${keyId}";alg="${signAlgorithm}"`
}

export interface AnswerSignatureBaseInput {
  readonly status: number
  /** The `Content-Digest` header value, e.g. `sha-256=:…:`. */
  readonly contentDigest: string
  /** The `Date` header value (IMF-fixdate). */
  readonly date: string
  /** The request's method, upper case. */
  readonly method: string
  /** The request's path, without the query. */
  readonly path: string
  /** `answerSignatureParams(created, keyId)`. */
  readonly signatureParams: string
}

/** The RFC 9421 signature base (§2.5): one line per covered component, then `@signature-params`. */
export function answerSignatureBase(input: AnswerSignatureBaseInput): string {
  return [
    `"@status": ${input.status}`,
    `"content-digest": ${input.contentDigest.trim()}`,
    `"date": ${input.date.trim()}`,
    `"@method";req: ${input.method}`,
    `"@path";req: ${input.path}`,
    `"@signature-params": ${input.signatureParams}`,
  ].join('\n')
}
