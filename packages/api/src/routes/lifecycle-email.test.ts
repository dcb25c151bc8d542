// Lifecycle emails end to end on a real server with a real SMTP server (smtp-server) in the test:
// the organization's first identified visitor mails its owner (both parts, RFC 8058 headers), the
// one-click unsubscribe link turns that email off for the organization, and a preference that is
// off sends nothing.
import { appendEvents, eventIdOf } from '@visitor-id/core/events'
import { type Harness, startHarness } from '@visitor-id/testing/harness'
import { type SmtpInbox, startSmtpInbox } from '@visitor-id/testing/smtp-inbox'
import { until } from '@visitor-id/testing/until'
import { simpleParser } from 'mailparser'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let h: Harness
let smtp: SmtpInbox
let inbox: Buffer[] = []

beforeAll(async () => {
  smtp = await startSmtpInbox()
  inbox = smtp.messages
  h = await startHarness({
    SMTP_URL: smtp.url,
    MAIL_FROM: 'Visitor ID <mail@visitor-id.test>',
    PUBLIC_URL: 'https://t.service.test',
  })
})

afterAll(async () => {
  await h?.stop()
  await smtp?.close()
})

async function identified(organizationId: string) {
  const visitorId = await h.seedPerson(organizationId)
  await appendEvents(h.store, [
    {
      event_id: eventIdOf('visitor.identified', organizationId, visitorId),
      type: 'visitor.identified',
      organization_id: organizationId,
      visitor_id: visitorId,
      payload: '{}',
      created_at: new Date().toISOString(),
    },
  ])
}

/** A header as written (mailparser reads some, like List-Unsubscribe, into objects). */
function header(mail: Awaited<ReturnType<typeof simpleParser>>, name: string): string {
  const line = mail.headerLines.find((entry) => entry.key === name.toLowerCase())?.line ?? ''
  return line
    .slice(line.indexOf(':') + 1)
    .replace(/\r?\n[ \t]+/g, ' ')
    .trim()
}

describe('lifecycle emails', () => {
  it('the first identified visitor mails the owner; the one-click link turns that email off', async () => {
    const owner = await h.repos.users.get({ id: h.boot.userId })
    await identified(h.boot.organizationId)
    const raw = await until(() => inbox[0])
    const mail = await simpleParser(raw)
    expect(mail.to && 'text' in mail.to ? mail.to.text : '').toContain(owner!.email)
    expect(mail.from?.text).toContain('mail@visitor-id.test')
    expect(mail.text).toBeTruthy()
    expect(mail.html).toBeTruthy()
    expect(header(mail, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click')
    const link = /<([^>]+)>/.exec(header(mail, 'List-Unsubscribe'))![1]!
    expect(link).toMatch(/^https:\/\/t\.service\.test\/email\/unsubscribe\?token=/)
    expect(mail.text).toContain(link)

    // A second identification is not the first: no second email.
    await identified(h.boot.organizationId)
    await new Promise((resolve) => setTimeout(resolve, 2500))
    expect(inbox).toHaveLength(1)

    const url = link.replace('https://t.service.test', '')
    const page = await h.server.app.inject({ method: 'GET', url })
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('<form method="post"')
    const preferences = () =>
      h.request({
        method: 'GET',
        url: `/api/v1/partner/organizations/${h.boot.organizationId}/email-preferences`,
        key: null,
        partnerKey: h.boot.partnerKey,
      })
    expect((await preferences()).json().preferences.first_visitor_identified).toEqual({
      enabled: true,
      inherited: true,
    })
    const done = await h.server.app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    })
    expect(done.statusCode).toBe(200)
    expect(done.body).toContain('Unsubscribed')
    expect((await preferences()).json().preferences.first_visitor_identified).toEqual({
      enabled: false,
      inherited: false,
    })
    const forged = await h.server.app.inject({
      method: 'POST',
      url: `${url.slice(0, -3)}xyz`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    })
    expect(forged.body).toContain('not valid')
  }, 30_000)

  it('an organization whose preference is off gets no email', async () => {
    const tenant = await h.createTenant()
    const before = inbox.length
    // Neither tenant has a partner: the organization's own value decides (default: on).
    await identified(tenant.organizationId)
    const other = await h.createTenant()
    const { updateOrganizationEmailPreferences } = await import('@visitor-id/core/email')
    await updateOrganizationEmailPreferences(h.store, other.organizationId, {
      first_visitor_identified: false,
    })
    await identified(other.organizationId)
    // The first tenant (preference on by default) is mailed; the other is not.
    await until(() => (inbox.length > before ? true : undefined))
    await new Promise((resolve) => setTimeout(resolve, 2500))
    expect(inbox.length).toBe(before + 1)
  }, 30_000)

  it('credits.low, as identification stores it when a charge crosses 10 % of the last grant, mails the balance', async () => {
    const tenant = await h.createTenant()
    const before = inbox.length
    await appendEvents(h.store, [
      {
        event_id: eventIdOf('credits.low', tenant.organizationId, 'initial'),
        type: 'credits.low',
        organization_id: tenant.organizationId,
        visitor_id: null,
        payload: JSON.stringify({
          event_type: 'credits.low',
          organization_id: tenant.organizationId,
          balance: 42,
        }),
        created_at: new Date().toISOString(),
      },
    ])
    const raw = await until(() => inbox[before])
    const mail = await simpleParser(raw)
    expect(mail.text).toContain('42')
    expect(header(mail, 'List-Unsubscribe')).toMatch(/unsubscribe\?token=/)
  }, 30_000)
})
