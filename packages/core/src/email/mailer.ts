// How lifecycle emails leave (docs/decisions.md, "Email"): through SMTP_URL with nodemailer, or, without
// it, as `.eml` files under DATA_DIR/mail so a development or self-hosted install without a mail
// server still shows what it would have sent. `send` either delivers or rejects, fast: sending
// runs inside jobs that retry, so an SMTP outage only delays mail, and a short timeout keeps a dead
// server from holding a worker slot.
import { randomBytes } from 'node:crypto'
import { mkdir, rename, writeFile } from 'node:fs/promises'
import path from 'node:path'
import nodemailer from 'nodemailer'
import { parseConnectionUrl } from 'nodemailer/lib/shared/index.js'
import { type LifecycleEmailData, renderLifecycleEmail } from './mail-templates.js'
import { unsubscribeToken, unsubscribeUrl } from './mail-unsubscribe.js'
import type { EmailPreferenceKey } from './preferences.js'

export interface MailMessage {
  to: string[]
  subject: string
  text: string
  html: string
  /** Extra headers (List-Unsubscribe...), sent as given. */
  headers?: Record<string, string>
}

export interface SentMail {
  /** The Message-ID header, `<...@...>`. */
  messageId: string
  via: 'smtp' | 'file'
  /** The .eml file written (file mode). */
  file?: string
}

export interface Mailer {
  /** Delivers to the SMTP server (accepted by it) or writes the file; rejects otherwise. */
  send(message: MailMessage): Promise<SentMail>
  /** Closes the pooled SMTP connections (nothing to do in file mode); safe to call twice. */
  close(): Promise<void>
}

export interface SmtpMailerOptions {
  /** SMTP_URL: `smtp://user:pass@host:587`, `smtps://...:465`. */
  smtpUrl: string
  /** The From header, e.g. `Visitor ID <no-reply@example.com>`. */
  from: string
  /** Connect, greeting and socket inactivity limit (default 10 000 ms; tests use less). */
  timeoutMs?: number
}

export interface FileMailerOptions {
  /** DATA_DIR: files go to `<dataDir>/mail`. */
  dataDir: string
  /** The From header, e.g. `Visitor ID <no-reply@example.com>`. */
  from: string
}

const defaultTimeoutMs = 10_000

/**
 * A mailer that delivers through an SMTP server. One per process: the connections are pooled
 * across sends. Which mailer a process uses is decided by the server's composition root.
 *
 * @example
 * const mailer = createSmtpMailer({ smtpUrl: 'smtp://relay:587', from: 'Visitor ID <no-reply@example.com>' })
 * await mailer.send(lifecycleMessage({ key: 'credits_low', to: 'ann@acme.com', ... }))
 */
export function createSmtpMailer(options: SmtpMailerOptions): Mailer {
  const timeoutMs = options.timeoutMs ?? defaultTimeoutMs
  const transport = nodemailer.createTransport({
    pool: true,
    // Lifecycle emails are few; two connections keep a burst moving without flooding a relay.
    maxConnections: 2,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    dnsTimeout: timeoutMs,
    // Parsed by nodemailer itself so SMTP_URL means what its documentation says (query options
    // such as `?tls.rejectUnauthorized=false` included); what the URL sets wins over the above.
    ...parseConnectionUrl(options.smtpUrl),
  })
  // A pooled connection that breaks between sends is reported as an 'error' event; unheard, it
  // would crash the process. The send that needs the connection gets its own error anyway.
  transport.on('error', () => {})
  return {
    async send(message) {
      const info = await transport.sendMail(mailOptions(options.from, message))
      return { messageId: info.messageId, via: 'smtp' }
    },
    async close() {
      transport.close()
    },
  }
}

/** A mailer that writes each message as an `.eml` file under `<dataDir>/mail`. */
export function createFileMailer(options: FileMailerOptions): Mailer {
  const directory = path.join(options.dataDir, 'mail')
  // nodemailer composes the message exactly as SMTP would send it (MIME parts, encodings,
  // Message-ID), and hands it back instead of sending it.
  const transport = nodemailer.createTransport({
    streamTransport: true,
    buffer: true,
    newline: 'windows',
  })
  return {
    async send(message) {
      const info = await transport.sendMail(mailOptions(options.from, message))
      // Owner-only: messages carry personal data and unsubscribe links that act without a login.
      await mkdir(directory, { recursive: true, mode: 0o700 })
      const stamp = new Date().toISOString().replace(/[:.]/g, '-')
      const file = path.join(directory, `${stamp}-${randomBytes(6).toString('hex')}.eml`)
      // Written under another name, then renamed: whoever watches the folder for *.eml never
      // reads half a message.
      const partial = `${file}.partial`
      // `buffer: true` makes it a Buffer (the type also allows a stream, which writeFile takes too).
      await writeFile(partial, info.message, { mode: 0o600, flag: 'wx' })
      await rename(partial, file)
      return { messageId: info.messageId, via: 'file', file }
    },
    async close() {},
  }
}

/**
 * Whether a failed send should not be retried: the server answered 5xx (RFC 5321: a permanent
 * failure, e.g. 550 no such mailbox), so sending the same message again gets the same answer.
 * Everything else (refused or timed-out connections, 4xx) is an outage or a delay: retry.
 *
 * @example catch (error) { if (isPermanentMailError(error)) markFailed(); else throw error }
 */
export function isPermanentMailError(error: unknown): boolean {
  const code = (error as { responseCode?: unknown } | null)?.responseCode
  return typeof code === 'number' && code >= 500 && code < 600
}

function mailOptions(from: string, message: MailMessage) {
  return {
    from,
    to: message.to,
    subject: message.subject,
    text: message.text,
    html: message.html,
    ...(message.headers ? { headers: message.headers } : {}),
  }
}

/** What lifecycleMessage needs for one recipient. */
export interface LifecycleMessageInput<K extends EmailPreferenceKey> {
  key: K
  /** One address: each recipient gets their own message, with their own signed link. */
  to: string
  organizationId: string
  /** The unsubscribe signing secret (mail-unsubscribe.ts). */
  secret: string
  /** PUBLIC_URL: where the unsubscribe route answers. */
  publicUrl: string
  /** The template's fields, without the unsubscribe URL (made here). */
  data: Omit<LifecycleEmailData<K>, 'unsubscribeUrl'>
}

/**
 * The message of one lifecycle email to one recipient: the rendered template (its link in both
 * parts) and the RFC 8058 headers, so a mail client's "Unsubscribe" button POSTs
 * `List-Unsubscribe=One-Click` to the same signed link. Send one per recipient, ideally one job
 * each, so a retry never mails twice those who already got it.
 *
 * @example
 * await mailer.send(lifecycleMessage({ key: 'credits_low', to: member.email, organizationId, secret, publicUrl,
 *   data: { organizationName: 'Acme', balance: 90, appUrl } }))
 */
export function lifecycleMessage<K extends EmailPreferenceKey>(input: LifecycleMessageInput<K>): MailMessage {
  const url = unsubscribeUrl(
    input.publicUrl,
    unsubscribeToken(input.secret, { organizationId: input.organizationId, key: input.key, email: input.to }),
  )
  const email = renderLifecycleEmail(input.key, {
    ...input.data,
    unsubscribeUrl: url,
  } as LifecycleEmailData<K>)
  return {
    to: [input.to],
    ...email,
    headers: {
      'List-Unsubscribe': `<${url}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    },
  }
}
