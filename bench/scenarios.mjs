/**
 * The HTTP scenarios against a running Keyturn: what each sends. `prepare` runs before the load
 * (it may ask the server, e.g. for a cursor) and returns the load (method and requests), or
 * `{ unavailable: reason }` when the server does not have the feature yet.
 */
import { randomBytes } from 'node:crypto'
import { writeActivationRequest } from '../packages/server/dist/offline/offline-formats.js'
import { measureDeliveries, withoutEventRows } from './events.mjs'
import { holdIdleConnections } from './idle-connections.mjs'
import { api, apiOk, freshValue } from './net.mjs'
import { customerName } from './seed.mjs'

const year = 365 * 86_400_000

/** The list query every list scenario uses: the documented example, a filter and a sort. */
function listQuery(now) {
  const filter = `status:in:active|expired,expirationDate:lt:${new Date(now + year).toISOString()}`
  return `limit=100&filter=${encodeURIComponent(filter)}&sort=${encodeURIComponent('expirationDate:asc')}`
}

/** Activate by key: how many machines come back, and the share of requests that are new machines. */
const returningMachines = 5_000
const newMachineShare = 0.25
/** Offline requests answered before the load (each costs a signed file to prepare). */
const offlineReturning = 1_500

/** How deep the deep-page scenarios go: the page at 90% of the matching licenses. */
const deepFraction = 0.9

/**
 * @typedef {{ url: string, adminKey: string, productId: string, pools: Record<string, string[]>, now: number, database: object, deliveries: number }} ScenarioContext
 * @type {{ id: string, title: string, ceiling: 'http' | 'insertCommit', prepare: (context: ScenarioContext) => Promise<object> }[]}
 */
export const scenarios = [
  {
    id: 'validate',
    title: 'validate by key',
    ceiling: 'http',
    prepare: async ({ productId, pools }) => ({
      method: 'POST',
      requests: pools.keys.map((key) => ({ path: '/api/v0/licenses/validate', body: { key, productId } })),
    }),
  },
  {
    // Signed answers: the same validations with a nonce and Keyturn-Sign: ed25519, so
    // each answer carries a Content-Digest and an RFC 9421 Ed25519 signature.
    id: 'validate-signed',
    title: 'validate by key, signed answer',
    ceiling: 'http',
    prepare: async ({ productId, pools }) => ({
      method: 'POST',
      headers: { 'keyturn-sign': 'ed25519' },
      requests: pools.keys.map((key) => ({
        path: '/api/v0/licenses/validate',
        body: { key, productId, nonce: randomBytes(16).toString('hex') },
      })),
    }),
  },
  {
    // Slow clients: the same validations while 10,000 idle keep-alive connections and 100 unfinished
    // (slowloris) requests hold sockets of the server; judged on p99 against `validate`'s.
    id: 'validate-idle-connections',
    title: 'validate by key, 10,000 idle connections held open',
    ceiling: 'http',
    prepare: async ({ url, productId, pools }) => ({
      method: 'POST',
      requests: pools.keys.map((key) => ({ path: '/api/v0/licenses/validate', body: { key, productId } })),
      setUp: () => holdIdleConnections(url, { idle: 10_000, slow: 100 }),
      // The 10,100 connections' memory stays with the process after they close: the scenarios after
      // this one get a fresh server, so that their RSS is their own.
      restartAfter: true,
    }),
  },
  {
    id: 'retrieve',
    title: 'retrieve by id',
    ceiling: 'http',
    prepare: async ({ pools }) => ({
      method: 'GET',
      requests: pools.ids.map((id) => ({ path: `/api/v0/licenses/${id}` })),
    }),
  },
  // The list targets: p50 ≤ 30 ms with one client, p99 ≤ 150 ms with 10 connections (a
  // scenario's `connections` replaces the run's 50).
  ...listScenarios(10, ''),
  ...listScenarios(1, '-one-client'),
  {
    id: 'metadata-lookup',
    title: 'list by metadata (filter=metadata.<key>:eq:)',
    ceiling: 'http',
    prepare: async ({ pools }) => ({
      method: 'GET',
      requests: pools.subscriptions.map((subscription) => ({
        path: `/api/v0/licenses?filter=${encodeURIComponent(`metadata.stripeSubscriptionId:eq:${subscription}`)}`,
      })),
    }),
  },
  {
    id: 'customer-lookup',
    title: "list a customer's licenses (filter=customerId:eq:)",
    ceiling: 'http',
    prepare: async ({ pools }) => ({
      method: 'GET',
      requests: pools.customerIds.map((customerId) => ({
        path: `/api/v0/licenses?filter=${encodeURIComponent(`customerId:eq:${customerId}`)}`,
      })),
    }),
  },
  {
    // The dashboard's search box: a mix of what a support person types, each kind one index probe
    // (keys as stored and as typed, ids, emails, name prefixes, machine fingerprints and names).
    id: 'search',
    title: 'search (keys, ids, emails, name prefixes, machines)',
    ceiling: 'http',
    prepare: async ({ url, adminKey, productId, pools }) => {
      const probe = await api(url, adminKey, 'GET', '/api/v0/search?q=probe')
      if (probe.status === 404 && probe.body?.code === 'route_not_found') {
        return { unavailable: 'GET /api/v0/search does not exist yet (404 route_not_found)' }
      }
      // Machines to find: a fingerprint and a name each, on licenses without a seat limit.
      const machines = pools.unlimitedKeys.slice(0, 50).map((key, i) => ({
        key,
        productId,
        fingerprint: randomBytes(16).toString('hex'),
        name: `Search machine ${i} ${randomBytes(3).toString('hex')}`,
      }))
      for (const machine of machines) {
        await apiOk(url, adminKey, 'POST', '/api/v0/licenses/activate', machine, 201)
      }
      const queries = [
        ...pools.keys.slice(0, 2_000),
        ...pools.keys.slice(2_000, 4_000).map((key) => key.replaceAll('-', '').toLowerCase()),
        ...pools.ids.slice(0, 1_000),
        ...pools.customerIds.slice(0, 1_000),
        ...pools.customerIds.slice(1_000, 3_000).map((id) => `${id.toLowerCase()}@bench.example`),
        // A name prefix that several seeded customers share ("buyer " and two characters).
        ...pools.customerIds.slice(3_000, 5_000).map((id) => customerName(id).slice(0, 8).toLowerCase()),
        ...machines.map((machine) => machine.fingerprint),
        ...machines.map((machine) => machine.name.slice(0, 16)),
        'nothing-matches-this',
      ]
      return {
        method: 'GET',
        connections: 10,
        requests: queries.map((q) => ({ path: `/api/v0/search?q=${encodeURIComponent(q)}` })),
      }
    },
  },
  {
    // The dashboard's overview: the daily counters of 30 and 90 days (one product and all), plus
    // the "now" figures (active machines, licenses expiring within 30 days) counted from indexes.
    id: 'stats',
    title: 'stats (30 and 90 days, one product and all)',
    ceiling: 'http',
    prepare: async ({ url, adminKey, productId }) => {
      const probe = await api(url, adminKey, 'GET', '/api/v0/stats')
      if (probe.status === 404 && probe.body?.code === 'route_not_found') {
        return { unavailable: 'GET /api/v0/stats does not exist yet (404 route_not_found)' }
      }
      const today = new Date()
      const daysBack = (days) => new Date(today.getTime() - days * 86_400_000).toISOString().slice(0, 10)
      return {
        method: 'GET',
        connections: 10,
        requests: [
          { path: '/api/v0/stats' },
          { path: `/api/v0/stats?productId=${productId}` },
          { path: `/api/v0/stats?from=${daysBack(89)}` },
          { path: `/api/v0/stats?from=${daysBack(89)}&productId=${productId}` },
        ],
      }
    },
  },
  {
    id: 'create',
    title: 'create license',
    ceiling: 'insertCommit',
    prepare: async ({ productId, now }) => ({
      method: 'POST',
      requests: [
        {
          path: '/api/v0/licenses',
          body: { productId, maxActivations: 3, expirationDate: new Date(now + year).toISOString() },
        },
      ],
    }),
  },
  {
    id: 'token',
    title: 'generate token',
    ceiling: 'joseSign',
    prepare: async ({ pools }) => ({
      method: 'POST',
      requests: pools.activeIds.map((id) => ({ path: `/api/v0/licenses/${id}/tokens`, body: {} })),
    }),
  },
  {
    // A license file (unencrypted, the policy's lifetime): read, sign, record its event, as a token.
    id: 'license-file',
    title: 'issue a license file',
    ceiling: 'joseSign',
    prepare: async ({ pools }) => ({
      method: 'POST',
      requests: pools.activeIds.map((id) => ({ path: `/api/v0/licenses/${id}/license-file`, body: {} })),
    }),
  },
  {
    id: 'activate',
    title: 'activate by key',
    ceiling: 'insertCommit',
    prepare: async ({ url, adminKey, productId, pools }) => {
      const path = '/api/v0/licenses/activate'
      const probe = await api(url, adminKey, 'POST', path, {
        key: pools.unlimitedKeys[0],
        productId,
        fingerprint: randomBytes(16).toString('hex'),
      })
      if (probe.status === 404 && probe.body?.code === 'route_not_found') {
        return { unavailable: 'POST /api/v0/licenses/activate does not exist yet (404 route_not_found)' }
      }
      if (probe.status !== 201 && probe.status !== 200) {
        throw new Error(`activate probe answered ${probe.status}: ${JSON.stringify(probe.body)}`)
      }
      // A fixed mix, whatever the rate: machines activated before the load come back (200), and one
      // request in four (`newMachineShare`) is a machine never seen (201). When machines were first
      // activated during the load, the new ones' share of the measured window followed the
      // warm-up's rate (21–33% in past full runs; bench/history.md).
      const activated = pools.unlimitedKeys.slice(0, returningMachines).map((key) => ({
        key,
        productId,
        fingerprint: randomBytes(16).toString('hex'),
      }))
      for (let start = 0; start < activated.length; start += 25) {
        await Promise.all(
          activated
            .slice(start, start + 25)
            .map((machine) => apiOk(url, adminKey, 'POST', path, machine, 201)),
        )
      }
      const newMachines = pools.unlimitedKeys
        .slice(0, Math.round((activated.length * newMachineShare) / (1 - newMachineShare)))
        .map((key) => ({ path, body: { key, productId, fingerprint: freshValue } }))
      return {
        method: 'POST',
        requests: [...activated.map((body) => ({ path, body })), ...newMachines],
        note: `${Math.round(newMachineShare * 100)}% new machines`,
      }
    },
  },
  {
    // Offline activation, next to `activate`: request files made on "machines" (HMAC keyed by the
    // license key), answered with an encrypted machine file each (HKDF, AES-GCM, an Ed25519 signature).
    id: 'activate-offline',
    title: 'activate offline (request file → machine file)',
    ceiling: 'insertCommit',
    prepare: async ({ url, adminKey, productId, pools, now }) => {
      const path = '/api/v0/licenses/activate-offline'
      const request = (key) =>
        writeActivationRequest(key, {
          productId,
          fingerprint: randomBytes(16).toString('hex'),
          nonce: randomBytes(16).toString('base64url'),
          created: new Date(now).toISOString(),
        })
      const probe = await api(url, adminKey, 'POST', path, { request: request(pools.unlimitedKeys[0]) })
      if (probe.status === 404 && probe.body?.code === 'route_not_found') {
        return {
          unavailable: 'POST /api/v0/licenses/activate-offline does not exist yet (404 route_not_found)',
        }
      }
      if (probe.status !== 201) {
        throw new Error(`activate-offline probe answered ${probe.status}: ${JSON.stringify(probe.body)}`)
      }
      // As `activate`: requests answered before the load come back (the same activation and file),
      // and one in four is a machine never seen, on its first pass through the list.
      const answered = pools.unlimitedKeys
        .slice(0, offlineReturning)
        .map((key) => ({ request: request(key) }))
      for (let start = 0; start < answered.length; start += 25) {
        await Promise.all(
          answered.slice(start, start + 25).map((body) => apiOk(url, adminKey, 'POST', path, body, 201)),
        )
      }
      const fresh = pools.unlimitedKeys
        .slice(0, Math.round((answered.length * newMachineShare) / (1 - newMachineShare)))
        .map((key) => ({ request: request(key) }))
      return {
        method: 'POST',
        requests: [...answered, ...fresh].map((body) => ({ path, body })),
        note: `${answered.length} answered requests again, ${fresh.length} new machines (new on their first pass only)`,
      }
    },
  },
  {
    id: 'heartbeat',
    title: 'heartbeat by key',
    ceiling: 'insertCommit',
    prepare: async ({ url, adminKey, productId }) => {
      // Floating licenses of their own (the seeded ones have no heartbeatTtl), one machine each.
      const machines = []
      for (let n = 0; n < floatingLicenses; n++) {
        const license = await api(url, adminKey, 'POST', '/api/v0/licenses', {
          productId,
          maxActivations: 1,
          heartbeatTtl: 604_800,
        })
        if (
          license.status === 400 &&
          license.body?.errors?.some((error) => error.pointer === '#/heartbeatTtl')
        ) {
          return { unavailable: 'licenses have no heartbeatTtl yet (floating seats)' }
        }
        if (license.status !== 201) {
          throw new Error(
            `creating a floating license answered ${license.status}: ${JSON.stringify(license.body)}`,
          )
        }
        const machine = { key: license.body.key, productId, fingerprint: randomBytes(16).toString('hex') }
        await apiOk(url, adminKey, 'POST', '/api/v0/licenses/activate', machine, 201)
        machines.push(machine)
      }
      return {
        method: 'POST',
        requests: machines.map((body) => ({ path: '/api/v0/licenses/heartbeat', body })),
        note: `${floatingLicenses} floating seats`,
      }
    },
  },
  {
    id: 'usage',
    title: 'usage increment',
    ceiling: 'insertCommit',
    prepare: async ({ url, adminKey, productId, pools }) => {
      const requests = pools.unlimitedKeys.map((key) => ({
        path: '/api/v0/licenses/usage',
        body: { key, productId, increment: 1 },
      }))
      const probe = await api(url, adminKey, 'POST', requests[0].path, requests[0].body)
      if (probe.status === 404 && probe.body?.code === 'route_not_found') {
        return { unavailable: 'POST /api/v0/licenses/usage does not exist yet (404 route_not_found)' }
      }
      if (probe.status !== 200) {
        throw new Error(`usage probe answered ${probe.status}: ${JSON.stringify(probe.body)}`)
      }
      return { method: 'POST', requests, note: 'unmetered licenses, increment 1' }
    },
  },
]

/**
 * Events: create, activate and token again with the event rows dropped by a trigger (bench/events.mjs),
 * each right after its own run, and the webhook delivery throughput.
 */
for (const id of ['create', 'activate', 'token']) {
  const index = scenarios.findIndex((scenario) => scenario.id === id)
  const scenario = scenarios[index]
  scenarios.splice(index + 1, 0, {
    ...scenario,
    id: `${id}-no-events`,
    title: `${scenario.title}, event rows dropped`,
    prepare: async (context) => {
      const restore = await withoutEventRows(context.database)
      let load
      try {
        load = await scenario.prepare(context) // its probe request writes no event row either
      } finally {
        await restore()
      }
      // Around each measured run: the harnesses call setUp and then what it returns.
      return { ...load, setUp: () => withoutEventRows(context.database) }
    },
  })
}
scenarios.push({
  id: 'webhook-delivery',
  title: 'webhook deliveries (per second)',
  ceiling: undefined,
  prepare: async (context) => ({
    measure: () =>
      measureDeliveries({
        url: context.url,
        adminKey: context.adminKey,
        productId: context.productId,
        database: context.database,
        licenseId: context.pools.activeIds[0],
        count: context.deliveries,
      }),
  }),
})

/** How many floating licenses the heartbeat scenario creates through the API. */
const floatingLicenses = 200

const deepPositions = new Map()

/** Page 0, a deep page and starting_after (deep), under `connections` clients; ids end with `suffix`. */
function listScenarios(connections, suffix) {
  const clients = connections === 1 ? '1 client' : `${connections} connections`
  return [
    {
      id: `list-page-0${suffix}`,
      title: `list 100, filter + sort, page 0, ${clients}`,
      ceiling: 'http',
      prepare: async ({ now }) => ({
        method: 'GET',
        connections,
        requests: [{ path: `/api/v0/licenses?${listQuery(now)}` }],
      }),
    },
    {
      id: `list-deep-page${suffix}`,
      title: `list 100, filter + sort, deep page, ${clients}`,
      ceiling: 'http',
      prepare: async (context) => {
        const { deepPage } = await deepListPosition(context)
        return {
          method: 'GET',
          connections,
          requests: [{ path: `/api/v0/licenses?${listQuery(context.now)}&page=${deepPage}` }],
          note: `page ${deepPage}`,
        }
      },
    },
    {
      id: `list-starting-after${suffix}`,
      title: `list 100, filter + sort, starting_after (deep), ${clients}`,
      ceiling: 'http',
      prepare: async (context) => {
        const { deepPage, cursor } = await deepListPosition(context)
        return {
          method: 'GET',
          connections,
          requests: [{ path: `/api/v0/licenses?${listQuery(context.now)}&starting_after=${cursor}` }],
          note: `the items of page ${deepPage}`,
        }
      },
    },
  ]
}

/** The deep page number and the id of the item just before it (the starting_after cursor). */
async function deepListPosition({ url, adminKey, now }) {
  const cacheKey = `${url} ${now}`
  let position = deepPositions.get(cacheKey)
  if (position === undefined) {
    const first = await apiOk(url, adminKey, 'GET', `/api/v0/licenses?${listQuery(now)}`)
    const deepPage = Math.max(1, Math.floor((first.totalCount * deepFraction) / 100))
    const before = await apiOk(
      url,
      adminKey,
      'GET',
      `/api/v0/licenses?${listQuery(now)}&page=${deepPage - 1}`,
    )
    const cursor = before.data.at(-1)?.id
    if (cursor === undefined) {
      throw new Error(`list page ${deepPage - 1} is empty; cannot take a cursor from it`)
    }
    position = { deepPage, cursor }
    deepPositions.set(cacheKey, position)
  }
  return position
}
