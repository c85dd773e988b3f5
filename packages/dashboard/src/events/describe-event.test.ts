import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { actorLink, describeActor, describeEvent } from './describe-event.js'

const license = { id: 'lic_a', key: '7K3QD-8M2XW-QF4TN-R9HCV-J6PBL', productId: 'prd_a' }
const event = (type: string, data: Record<string, unknown>) => ({
  type,
  productId: 'prd_a',
  actor: { type: 'system', id: 'expiry-notices' },
  data,
})

describe('events said as a person would', () => {
  it('names a license by the first group of its key and links to it', () => {
    assert.deepEqual(describeEvent(event('license.revoked', license)), {
      text: 'License 7K3QD-… revoked',
      link: '/licenses/lic_a',
    })
  })

  it('names the license of a validation answer, which nests it', () => {
    assert.deepEqual(describeEvent(event('license.validation_failed', { license, reason: 'expired' })), {
      text: 'License 7K3QD-… failed validation',
      link: '/licenses/lic_a',
    })
  })

  it('says an expiry notice with its days', () => {
    assert.equal(
      describeEvent(event('license.expiring_soon', { ...license, expiresInDays: 14 })).text,
      'License 7K3QD-… expires in 14 days',
    )
  })

  it("says machines by their name, else their fingerprint's start, and links to their license", () => {
    assert.deepEqual(
      describeEvent(event('activation.created', { id: 'act_a', licenseId: 'lic_a', name: 'Ada’s laptop' })),
      { text: 'Machine Ada’s laptop activated', link: '/licenses/lic_a' },
    )
    assert.equal(
      describeEvent(
        event('activation.deleted', { id: 'act_a', licenseId: 'lic_a', fingerprint: '4f9c2b7e1a6d3f08c5e2' }),
      ).text,
      'Machine 4f9c2b7e1a6d deactivated',
    )
  })

  it('links a customer, but not one that was deleted', () => {
    assert.deepEqual(describeEvent(event('customer.created', { id: 'cus_a', email: 'ada@example.com' })), {
      text: 'Customer ada@example.com created',
      link: '/customers/cus_a',
    })
    assert.deepEqual(describeEvent(event('customer.deleted', { id: 'cus_a', email: 'ada@example.com' })), {
      text: 'Customer ada@example.com deleted',
    })
  })

  it('says an event type it does not know from its words', () => {
    assert.deepEqual(describeEvent(event('robot.assembled', { id: 'rbt_a' })), {
      text: 'robot rbt_a assembled',
    })
  })

  it('names an integration by its provider and links to it, but not one that was deleted', () => {
    assert.deepEqual(describeEvent(event('integration.updated', { id: 'int_a', provider: 'lemonsqueezy' })), {
      text: 'Integration Lemon Squeezy updated',
      link: '/integrations/int_a',
    })
    assert.deepEqual(describeEvent(event('integration.deleted', { id: 'int_a', provider: 'stripe' })), {
      text: 'Integration Stripe deleted',
    })
  })

  it('says license files, plan moves and disabled endpoints in words', () => {
    assert.equal(
      describeEvent(event('license.file_issued', license)).text,
      'License 7K3QD-… license file issued',
    )
    assert.equal(
      describeEvent(event('license.policy_changed', { ...license, previousPolicyId: 'pol_a' })).text,
      'License 7K3QD-… moved to another policy',
    )
    assert.equal(
      describeEvent(event('webhook_endpoint.disabled', { id: 'whk_a', url: 'https://x.example/h' })).text,
      'Webhook endpoint https://x.example/h disabled (its deliveries kept failing)',
    )
  })

  it("says the portal's events by the customer, resolved to an email when known, and links to them", () => {
    const names = { customers: new Map([['cus_a', 'ada@example.com']]) }
    assert.deepEqual(
      describeEvent(event('portal.signed_in', { customerId: 'cus_a', ip: '203.0.113.7' }), names),
      {
        text: 'Customer ada@example.com signed in to the portal',
        link: '/customers/cus_a',
      },
    )
    assert.deepEqual(
      describeEvent(event('portal.sign_in_failed', { customerId: null, reason: 'wrong_code' })),
      {
        text: 'Someone failed to sign in to the portal (a wrong code)',
      },
    )
    assert.equal(
      describeEvent(event('portal.sign_in_requested', { customerId: 'cus_b', via: 'portalLink' }), names)
        .text,
      'Customer cus_b asked for a portal sign-in code (a portal link was sent)',
    )
    assert.equal(
      describeEvent(event('portal.key_resent', { customerId: 'cus_a', licenseId: 'lic_a' }), names).text,
      'Customer ada@example.com had the license key mailed again from the portal',
    )
  })
})

describe('who did it', () => {
  it('says API keys with their role, Keyturn itself with its part, and actor kinds it does not know', () => {
    assert.equal(describeActor({ type: 'apiKey', id: 'key_a', role: 'admin' }), 'admin key key_a')
    assert.equal(describeActor({ type: 'system', id: 'expiry-notices' }), 'Keyturn (expiry notices)')
    assert.equal(describeActor({ type: 'system' }), 'Keyturn')
    assert.equal(describeActor({ type: 'customer', id: 'cus_a' }), 'customer cus_a')
    const names = { operators: new Map([['opr_a', 'Olga <olga@example.com>']]) }
    assert.equal(describeActor({ type: 'operator', id: 'opr_a' }, names), 'Olga <olga@example.com>')
    assert.equal(describeActor({ type: 'operator', id: 'opr_gone' }, names), 'operator opr_gone')
    assert.equal(describeActor({ type: 'integration', id: 'int_a' }), 'integration int_a')
    assert.equal(describeActor({ type: 'robot', id: 'r2' }), 'robot r2')
    assert.equal(describeActor({}), 'unknown')
  })

  it('says operator management in words: role changes, sign-outs, factors, invitations', () => {
    const grace = { id: 'opr_a', email: 'grace@example.com', role: 'admin', status: 'active' }
    const say = (type: string, extra: Record<string, unknown> = {}) =>
      describeEvent({ ...event(type, { ...grace, ...extra }), productId: null }).text
    assert.deepEqual(describeEvent({ ...event('operator.created', grace), productId: null }), {
      text: 'Operator grace@example.com created',
      link: '/operators',
    })
    assert.equal(
      say('operator.updated', { previous: { role: 'support' } }),
      'Operator grace@example.com changed role from support to admin',
    )
    assert.equal(
      say('operator.invited', { mailed: true }),
      'Operator grace@example.com invited as admin (mailed)',
    )
    assert.equal(
      say('operator.session_ended', { reason: 'revokedAll' }),
      'Operator grace@example.com was signed out everywhere',
    )
    assert.equal(
      say('operator.session_ended', { reason: 'signedOut' }),
      'Operator grace@example.com signed out',
    )
    assert.equal(
      say('operator.two_factor_disabled', { by: 'owner' }),
      'Operator grace@example.com had two-factor authentication reset by an owner',
    )
    assert.equal(
      say('operator.session_ended', { reason: 'twoFactorRequired' }),
      'Operator grace@example.com was signed out (two-factor authentication became required)',
    )
    assert.deepEqual(
      describeEvent({
        ...event('operator_settings.updated', {
          requireTwoFactor: true,
          previous: { requireTwoFactor: false },
          sessionsEnded: 3,
        }),
        productId: null,
      }),
      {
        text: 'Operator settings changed: two-factor authentication required of everyone (3 sessions ended)',
        link: '/operators',
      },
    )
    assert.equal(
      describeEvent({
        ...event('operator_settings.updated', { requireTwoFactor: false, sessionsEnded: 0 }),
        productId: null,
      }).text,
      'Operator settings changed: two-factor authentication no longer required',
    )
    assert.equal(say('operator.disabled'), 'Operator grace@example.com disabled')
    assert.equal(say('operator.activated'), 'Operator grace@example.com accepted the invitation')
  })

  it('resolves API keys, integrations and customers to their names when the dashboard could read them', () => {
    const names = {
      apiKeys: new Map([['key_a', 'CI deploy']]),
      integrations: new Map([['int_a', 'Paddle']]),
      customers: new Map([['cus_a', 'ada@example.com']]),
    }
    assert.equal(
      describeActor({ type: 'apiKey', id: 'key_a', role: 'admin' }, names),
      'admin key “CI deploy”',
    )
    assert.equal(describeActor({ type: 'integration', id: 'int_a' }, names), 'Paddle integration')
    assert.equal(describeActor({ type: 'customer', id: 'cus_a' }, names), 'customer ada@example.com')
    assert.equal(describeActor({ type: 'customer', id: 'cus_gone' }, names), 'customer cus_gone')
  })

  it("links an actor to the dashboard's page of it", () => {
    assert.equal(actorLink({ type: 'integration', id: 'int_a' }, true), '/integrations/int_a')
    assert.equal(actorLink({ type: 'integration', id: 'int_a' }, false), undefined)
    assert.equal(actorLink({ type: 'customer', id: 'cus_a' }, false), '/customers/cus_a')
    assert.equal(actorLink({ type: 'system', id: 'seat-sweep' }, true), undefined)
  })
})
