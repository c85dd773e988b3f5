import type { SearchHit } from '@keyturn/protocol'
import { normalizeLicenseKey } from '../core/ids.js'
import { type Principal, requireManagementKey, scopedProductId } from '../core/principal.js'
import type {
  ActivationHitRow,
  CustomerHitRow,
  LicenseHitRow,
  SearchScope,
  SearchStore,
} from './search-store.js'

/** The most hits one search answers: a support person refines the query rather than pages. */
export const searchLimit = 20

/**
 * One box for a support person. The query's shape picks the lookups, each one index probe:
 * text with `@` looks up an email (exact, case-insensitive); an id prefix (`lic_`, `cus_`,
 * `act_`) that id only; anything else a license key (as given and canonicalised, never a prefix),
 * a machine fingerprint (exact) and customer and machine names (prefix, case-insensitive).
 * A product key finds only its product's licenses and machines and the customers owning one of
 * its licenses; client keys may not search.
 */
export class SearchService {
  readonly #store: SearchStore

  constructor(deps: { store: SearchStore }) {
    this.#store = deps.store
  }

  async search(principal: Principal, q: string): Promise<SearchHit[]> {
    requireManagementKey(principal)
    const productId = scopedProductId(principal)
    const scope: SearchScope = productId === undefined ? undefined : { productId }
    const text = q.trim()
    if (text === '') {
      return []
    }
    const store = this.#store
    // Before the id prefixes: an address may start like an id (`cus_1@example.com`); no id has an @.
    if (text.includes('@')) {
      return (await store.customerByEmail(text.toLowerCase(), scope)).map((row) => customerHit(row, 'email'))
    }
    if (text.startsWith('lic_')) {
      return (await store.licenseById(text, scope)).map((row) => licenseHit(row, 'id'))
    }
    if (text.startsWith('cus_')) {
      return (await store.customerById(text, scope)).map((row) => customerHit(row, 'id'))
    }
    if (text.startsWith('act_')) {
      return (await store.activationById(text, scope)).map((row) => activationHit(row, 'id'))
    }
    const keys = [...new Set([text, normalizeLicenseKey(text)])]
    const [licenses, fingerprints, customers, machines] = await Promise.all([
      store.licensesByKeys(keys, scope, searchLimit),
      store.activationsByFingerprint(text, scope, searchLimit),
      store.customersByName(text, scope, searchLimit),
      store.activationsByName(text, scope, searchLimit),
    ])
    const seen = new Set<string>()
    const hits: SearchHit[] = []
    for (const hit of [
      ...licenses.map((row) => licenseHit(row, 'key')),
      ...fingerprints.map((row) => activationHit(row, 'fingerprint')),
      ...customers.map((row) => customerHit(row, 'name')),
      ...machines.map((row) => activationHit(row, 'name')),
    ]) {
      if (!seen.has(hit.id) && hits.length < searchLimit) {
        seen.add(hit.id)
        hits.push(hit)
      }
    }
    return hits
  }
}

function licenseHit(row: LicenseHitRow, matched: SearchHit['matched']): SearchHit {
  return {
    object: 'License',
    id: row.id,
    title: row.key,
    subtitle: row.customerEmail === null ? row.productName : `${row.productName} · ${row.customerEmail}`,
    matched,
    productId: row.productId,
    licenseId: row.id,
  }
}

function customerHit(row: CustomerHitRow, matched: SearchHit['matched']): SearchHit {
  return { object: 'Customer', id: row.id, title: row.email, subtitle: row.name ?? '', matched }
}

function activationHit(row: ActivationHitRow, matched: SearchHit['matched']): SearchHit {
  return {
    object: 'Activation',
    id: row.id,
    title: row.name ?? row.fingerprint,
    subtitle:
      row.name === null ? `License ${row.licenseKey}` : `${row.fingerprint} · License ${row.licenseKey}`,
    matched,
    productId: row.productId,
    licenseId: row.licenseId,
  }
}
