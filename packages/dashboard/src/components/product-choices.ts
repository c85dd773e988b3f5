import { useQuery } from '@tanstack/react-query'
import { useSession } from '../session/session.js'

/**
 * The products to choose from in a form: one page of 100 (the API's largest). With more products
 * than that, `data` is undefined and the form asks for a product id instead, so no screen fetches
 * more than one page.
 */
export function useProductChoices() {
  const { client } = useSession()
  return useQuery({
    queryKey: ['products', 'choices'],
    queryFn: () => client.listProducts({ limit: 100, sort: 'name:asc' }),
    select: (page) => (page.hasNextPage ? undefined : page),
  })
}
