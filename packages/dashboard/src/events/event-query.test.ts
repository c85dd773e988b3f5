import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { eventListQuery } from './event-query.js'

describe('the events view in the URL', () => {
  it('asks for the first page in the default order when the URL has no parameters', () => {
    assert.deepEqual(eventListQuery(new URLSearchParams()), { limit: 30, page: 0 })
  })

  it('turns every filter into one API filter rule when the URL names them', () => {
    const search = new URLSearchParams(
      'type=license.revoked&productId=prd_a&licenseId=lic_d&from=2030-01-01&to=2030-01-31&apiKeyId=key_b&after=evt_c',
    )

    assert.deepEqual(eventListQuery(search), {
      limit: 30,
      starting_after: 'evt_c',
      filter:
        'type:eq:license.revoked,productId:eq:prd_a,licenseId:eq:lic_d,occurredAt:gte:2030-01-01T00:00:00.000Z,occurredAt:lte:2030-01-31T23:59:59.999Z,actor.id:eq:key_b',
    })
  })

  it('filters by an operator: its actor type and id', () => {
    assert.deepEqual(eventListQuery(new URLSearchParams('operatorId=opr_a')), {
      limit: 30,
      page: 0,
      filter: 'actor.type:eq:operator,actor.id:eq:opr_a',
    })
  })
})
