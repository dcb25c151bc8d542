// A real SMTP server on loopback (smtp-server) that keeps every message it receives, raw: the
// lifecycle email tests send through it with SMTP_URL.
import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'

export interface SmtpInbox {
  /** `smtp://127.0.0.1:<port>`, for SMTP_URL. */
  url: string
  /** Every message received, as sent. */
  messages: Buffer[]
  close(): Promise<void>
}

export async function startSmtpInbox(): Promise<SmtpInbox> {
  const messages: Buffer[] = []
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, _session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        messages.push(Buffer.concat(chunks))
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve))
  return {
    url: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
    messages,
    close: () => new Promise<void>((resolve) => smtp.close(() => resolve())),
  }
}
