import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { pageNumbers, readListParams, withParams } from '../components/list-params.js'
import { licenseListQuery } from './license-query.js'

describe('the licenses view in the URL', () => {
  it('asks for the first page of 30 in the default order when the URL has no parameters', () => {
    assert.deepEqual(licenseListQuery(new URLSearchParams()), { limit: 30, page: 0 })
  })

  it('turns every filter into one API filter rule when the URL names them', () => {
    const search = new URLSearchParams(
      'status=active&productId=prd_abc&expiresFrom=2030-01-01&expiresTo=2030-12-31&sort=key:asc&page=2&limit=50',
    )

    assert.deepEqual(licenseListQuery(search), {
      limit: 50,
      page: 2,
      sort: 'key:asc',
      filter:
        'status:eq:active,productId:eq:prd_abc,expirationDate:gte:2030-01-01T00:00:00.000Z,expirationDate:lte:2030-12-31T23:59:59.999Z',
    })
  })

  it('filters by customer, policy and a metadata value when the URL names them', () => {
    const search = new URLSearchParams('customerId=cus_1&policyId=pol_2&metaKey=plan&metaValue=pro')

    assert.equal(
      licenseListQuery(search).filter,
      'customerId:eq:cus_1,policyId:eq:pol_2,metadata.plan:eq:pro',
    )
  })

  it('pages by starting_after instead of a page number when the URL holds a cursor', () => {
    assert.deepEqual(licenseListQuery(new URLSearchParams('after=lic_xyz&page=4')), {
      limit: 30,
      starting_after: 'lic_xyz',
    })
  })

  it('falls back to the default page size when the URL asks for one the view does not offer', () => {
    assert.equal(readListParams(new URLSearchParams('limit=5000')).limit, 30)
  })

  it('removes a parameter when a change sets it empty', () => {
    const next = withParams(new URLSearchParams('status=active&page=3'), {
      status: '',
      page: undefined,
      limit: 10,
    })

    assert.equal(next.toString(), 'limit=10')
  })

  it('offers the first, the last and two pages either side of the current one when there are many', () => {
    assert.deepEqual(pageNumbers({ page: 500, totalPages: 33_334 }), [0, 498, 499, 500, 501, 502, 33_333])
    assert.deepEqual(pageNumbers({ page: 0, totalPages: 2 }), [0, 1])
    assert.deepEqual(pageNumbers({ page: 0, totalPages: 0 }), [])
  })
})
