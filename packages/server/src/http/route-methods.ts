/**
 * @module Which methods each registered path answers, learnt from Fastify's `onRoute` hook, so a
 * wrong method on a known path is a 405 with an `Allow` header rather than a 404. Fastify's router
 * keeps one tree per method and says only "not found"; this keeps every path in one tree.
 */
import FindMyWay from 'find-my-way'

/** The order of an `Allow` header: the usual methods first, any other alphabetically after. */
const methodOrder = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

export class RouteMethods {
  readonly #router = FindMyWay()
  readonly #byPath = new Map<string, Set<string>>()

  /** Records a route; call it from an `onRoute` hook added before any route is registered. */
  add(url: string, methods: string | readonly string[]): void {
    if (url === '*' || url === '/*') {
      return // a catch-all (a CORS preflight route, say) would make every unknown path a 405
    }
    let known = this.#byPath.get(url)
    if (known === undefined) {
      known = new Set()
      this.#byPath.set(url, known)
      this.#router.on('GET', url, () => undefined, known)
    }
    for (const method of [methods].flat()) {
      known.add(method.toUpperCase())
    }
  }

  /** The methods the path answers, in `Allow` order, or an empty list for an unknown path. */
  allowed(path: string): string[] {
    const found = this.#router.find('GET', path.split('?')[0] ?? path)
    const methods: Set<string> | undefined = found?.store
    return [...(methods ?? [])].sort(byMethodOrder)
  }
}

function byMethodOrder(a: string, b: string): number {
  const [i, j] = [methodOrder.indexOf(a), methodOrder.indexOf(b)]
  if (i === -1 || j === -1) {
    return i === j ? a.localeCompare(b) : i === -1 ? 1 : -1
  }
  return i - j
}
