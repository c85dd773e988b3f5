import { createTransport, type Transporter } from 'nodemailer'
import type { MailMessage } from './kysely-mail-outbox.js'

/** Sends one message; throws when the server refuses it or cannot be reached. */
export interface MailSender {
  send(message: MailMessage): Promise<void>
  close(): void
}

/** A bounded attempt: a hanging SMTP server holds one sending loop for at most this long. */
const smtpTimeoutMs = 10_000

/** SMTP through nodemailer (KEYTURN_SMTP_URL, e.g. `smtps://user:pass@smtp.example.com:465`). */
export class SmtpMailSender implements MailSender {
  readonly #transport: Transporter
  readonly #from: string

  constructor(options: { readonly url: string; readonly from: string; readonly timeoutMs?: number }) {
    const timeout = options.timeoutMs ?? smtpTimeoutMs
    const url = new URL(options.url)
    this.#transport = createTransport({
      host: url.hostname,
      port: url.port === '' ? undefined : Number(url.port),
      secure: url.protocol === 'smtps:',
      auth:
        url.username === ''
          ? undefined
          : { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) },
      connectionTimeout: timeout,
      greetingTimeout: timeout,
      socketTimeout: timeout,
      // A plain-SMTP URL on loopback (tests, a local relay) needs no STARTTLS; elsewhere it is used when offered.
      ignoreTLS: url.searchParams.get('tls') === 'off',
    })
    this.#from = options.from
  }

  async send(message: MailMessage): Promise<void> {
    await this.#transport.sendMail({
      from: this.#from,
      to: message.to,
      subject: message.subject,
      text: message.text,
      html: message.html,
    })
  }

  close(): void {
    this.#transport.close()
  }
}
