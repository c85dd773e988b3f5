import { Link } from 'react-router'
import { useSession } from '../session/session.js'
import { useProductChoices } from './product-choices.js'

/** Product names by id, from the one page of choices (an id missing here is shown as the id). */
export function useProductNames(): Map<string, string> {
  const products = useProductChoices()
  return new Map((products.data?.data ?? []).map((product) => [product.id, product.name]))
}

/** A link to a product's page, by its name when the choices know it. */
export function ProductLink({ id }: { id: string }) {
  const names = useProductNames()
  return <Link to={`/products/${id}`}>{names.get(id) ?? id}</Link>
}

/**
 * A required "Product" field named `productId`: a select over one page of products, or a text field
 * for the id when there are more; a product key's own product is chosen already.
 */
export function ProductField({ id, label = 'Product' }: { id: string; label?: string }) {
  const session = useSession()
  const products = useProductChoices()
  const scoped = session.access.role === 'product' ? session.access.productId : undefined
  return (
    <>
      <label htmlFor={id}>{label}</label>
      {products.data ? (
        <select id={id} name="productId" required defaultValue={scoped}>
          {products.data.data.map((product) => (
            <option key={product.id} value={product.id}>
              {product.name}
            </option>
          ))}
        </select>
      ) : (
        <input id={id} name="productId" required placeholder="prd_…" defaultValue={scoped} />
      )}
    </>
  )
}
