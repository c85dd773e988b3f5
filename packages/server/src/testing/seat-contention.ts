import assert from 'node:assert/strict'

export interface Posted {
  readonly status: number
  readonly body: { id: string; key: string } // the API's JSON
}

/** POST `body` as JSON to `/api/v0<path>` of a server process, with an admin key. */
export function adminPoster(adminKey: string) {
  const headers = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }
  return async (base: string, path: string, body: unknown): Promise<Posted> => {
    const res = await fetch(`${base}/api/v0${path}`, { method: 'POST', headers, body: JSON.stringify(body) })
    return { status: res.status, body: (await res.json()) as Posted['body'] }
  }
}

/**
 * 50 machines activate a license of 3 seats at once, alternating between two server processes:
 * exactly 3 get a seat (201) and 47 are refused (409).
 */
export async function assertThreeOfFiftyActivate(
  post: ReturnType<typeof adminPoster>,
  bases: readonly [string, string],
  license: { readonly key: string },
  productId: string,
  round: number,
): Promise<void> {
  const answers = await Promise.all(
    Array.from({ length: 50 }, (_, machine) =>
      post(bases[machine % 2] ?? bases[0], '/licenses/activate', {
        key: license.key,
        productId,
        fingerprint: `round-${round}-machine-${machine}`,
      }),
    ),
  )
  const statuses = answers.map((answer) => answer.status)
  assert.equal(statuses.filter((status) => status === 201).length, 3, `round ${round}: ${statuses.join(',')}`)
  assert.equal(
    statuses.filter((status) => status === 409).length,
    47,
    `round ${round}: ${statuses.join(',')}`,
  )
}
