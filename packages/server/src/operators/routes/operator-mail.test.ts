import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { signedInOperator, testOperatorPassword } from '../../testing/operators.js'
import { type ReceivedMail, startSmtpServer } from '../../testing/smtp-server.js'
import { storedRows } from '../../testing/stored-rows.js'

const publicUrl = 'https://keys.example.com'
const newPassword = 'a brand new passphrase'

/** The last one-time link of `kind` mailed to `email` (quoted-printable soft breaks undone). */
function linkIn(
  received: readonly ReceivedMail[],
  email: string,
  kind: 'invitation' | 'password-reset',
): string {
  const pattern = new RegExp(`${publicUrl}/dashboard/${kind}#[A-Za-z0-9_-]+`)
  const links = received
    .filter((mail) => mail.to.includes(email))
    .map((mail) => pattern.exec(mail.raw.replace(/=\r\n/g, ''))?.[0])
    .filter((link) => link !== undefined)
  const link = links.at(-1)
  assert.ok(link !== undefined, `no ${kind} link reached ${email}`)
  return link
}

const tokenOf = (link: string) => link.slice(link.indexOf('#') + 1)

describeEachDatabase('Operator mails', (database) => {
  it('mails invitations and reset links from the public URL; they work once; the mail log and events hold no secret', async (t) => {
    const smtp = await startSmtpServer(t)
    const test = await buildTestApp(t, database, {
      mail: { smtpUrl: smtp.url, from: 'keyturn@acme.example', templatesFolder: undefined },
      publicUrl,
    })
    const send = async () => {
      while (((await test.services.mail?.tick()) ?? 0) > 0) {}
    }
    const owner = await signedInOperator(test, 'owner')
    const post = (url: string, payload: object, headers: Record<string, string> = {}) =>
      test.app.inject({ method: 'POST', url, payload, headers })

    // An owner invites: the answer still offers the link, and the same link is mailed.
    const invited = await post(
      '/api/v0/operators',
      { email: 'ada@example.com', name: 'Ada', role: 'support' },
      owner.write,
    )
    assert.equal(invited.statusCode, 201, invited.body)
    assert.equal(invited.json().mailed, true)
    await send()
    const invitation = linkIn(smtp.received, 'ada@example.com', 'invitation')
    assert.equal(invitation, invited.json().invitationUrl)
    assert.match(smtp.received.at(-1)?.raw ?? '', /The owner invited you to the Keyturn dashboard as support/)

    const accepted = await post('/operator/invitation', {
      token: tokenOf(invitation),
      password: testOperatorPassword,
    })
    assert.equal(accepted.statusCode, 200, accepted.body)
    assert.equal(accepted.json().operator.status, 'active')
    const adaCookie = String(accepted.headers['set-cookie']).split(';')[0] ?? ''
    const again = await post('/operator/invitation', {
      token: tokenOf(invitation),
      password: testOperatorPassword,
    })
    assert.equal(again.statusCode, 401, 'an invitation works once')

    // "Forgot password": the same 202 for an unknown address, and no mail.
    const mailsBefore = smtp.received.length
    const unknown = await post('/operator/password-reset-request', { email: 'nobody@example.com' })
    assert.equal(unknown.statusCode, 202, unknown.body)
    assert.equal(unknown.body, '')
    await send()
    assert.equal(smtp.received.length, mailsBefore, 'no mail for an unknown address')

    const known = await post('/operator/password-reset-request', { email: 'Ada@Example.com' })
    assert.equal(known.statusCode, 202, known.body)
    assert.equal(known.body, '')
    await send()
    const reset = linkIn(smtp.received, 'ada@example.com', 'password-reset')
    const changed = await post('/operator/password-reset', { token: tokenOf(reset), password: newPassword })
    assert.equal(changed.statusCode, 204, changed.body)
    const me = await test.app.inject({ method: 'GET', url: '/operator/me', headers: { cookie: adaCookie } })
    assert.equal(me.statusCode, 401, 'the reset ended the operator’s sessions')
    const oldPassword = await post('/operator/sign-in', {
      email: 'ada@example.com',
      password: testOperatorPassword,
    })
    assert.equal(oldPassword.statusCode, 401)
    const signedIn = await post('/operator/sign-in', { email: 'ada@example.com', password: newPassword })
    assert.equal(signedIn.statusCode, 200, signedIn.body)

    // An owner makes a reset link for another operator: offered in the answer and mailed.
    const byOwner = await post(
      `/api/v0/operators/${accepted.json().operator.id}/password-reset`,
      {},
      owner.write,
    )
    assert.equal(byOwner.statusCode, 201, byOwner.body)
    assert.equal(byOwner.json().mailed, true)
    await send()
    assert.equal(linkIn(smtp.received, 'ada@example.com', 'password-reset'), byOwner.json().resetUrl)

    // Asked too often for one address: 429, whoever owns it.
    for (let i = 0; i < 2; i++) {
      assert.equal(
        (await post('/operator/password-reset-request', { email: 'nobody@example.com' })).statusCode,
        202,
      )
    }
    const limited = await post('/operator/password-reset-request', { email: 'nobody@example.com' })
    assert.equal(limited.statusCode, 429, limited.body)
    assert.ok(Number(limited.headers['retry-after']) > 0)

    // The delivery log lists the mails, never a link; no event, no outbox row keeps a token.
    const log = await test.app.inject({ method: 'GET', url: '/api/v0/emails', headers: test.headers })
    assert.equal(log.statusCode, 200, log.body)
    assert.deepEqual(
      log
        .json()
        .data.map((entry: { template: string }) => entry.template)
        .sort(),
      ['operator-invitation', 'operator-password-reset', 'operator-password-reset'],
    )
    const tokens = [invitation, reset, byOwner.json().resetUrl].map(tokenOf)
    const stored = JSON.stringify([
      log.json(),
      await storedRows(test.connection.db, 'events'),
      await storedRows(test.connection.db, 'mail_outbox'),
    ])
    for (const secret of [...tokens, testOperatorPassword, newPassword]) {
      assert.ok(!stored.includes(secret), 'no link secret or password is stored or listed')
    }
  })

  it('never builds a mailed reset link from the Host header anyone may send', async (t) => {
    const smtp = await startSmtpServer(t)
    const test = await buildTestApp(t, database, {
      mail: { smtpUrl: smtp.url, from: 'keyturn@acme.example', templatesFolder: undefined },
    })
    await signedInOperator(test, 'owner')
    const email = (await test.services.operators.list())[0]?.email ?? ''
    const asked = await test.app.inject({
      method: 'POST',
      url: '/operator/password-reset-request',
      headers: { host: 'evil.example', 'x-forwarded-host': 'evil.example' },
      payload: { email },
    })
    assert.equal(asked.statusCode, 202, asked.body)
    while (((await test.services.mail?.tick()) ?? 0) > 0) {}
    const mail = smtp.received.at(-1)?.raw.replace(/=\r\n/g, '') ?? ''
    assert.match(mail, /\/dashboard\/password-reset#/)
    assert.doesNotMatch(mail, /evil\.example/)
  })
})
