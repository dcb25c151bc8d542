import { describe, expect, it } from 'vitest'
import { escapeHtml, type LifecycleEmailFields, renderLifecycleEmail } from './mail-templates.js'
import type { EmailPreferenceKey } from './preferences.js'

const unsubscribeUrl = 'https://id.example.com/email/unsubscribe?token=abc.def'
const common = { organizationName: 'Acme', unsubscribeUrl, appUrl: 'https://app.example.com' }

const samples: { [K in EmailPreferenceKey]: LifecycleEmailFields[K] } = {
  first_visitor_identified: { visitor: { name: 'Jane Doe', email: 'jane@globex.test', company: 'Globex' } },
  credits_low: { balance: 1250 },
  credits_exhausted: { balance: -3 },
  subscription_activated: { plan: 'Growth' },
  subscription_canceled: { plan: 'Growth', endsAt: '2026-03-05T12:00:00Z' },
  payment_failed: { plan: 'Growth', amount: { minor: 4900, currency: 'USD' } },
  renewal_receipt: {
    plan: 'Growth',
    amount: { minor: 4900, currency: 'JPY' },
    periodEnd: new Date('2026-04-01T00:00:00Z'),
    invoiceUrl: 'https://pay.example.com/invoice/1',
  },
  integration_reconnect: { integration: 'Social ads', expiresAt: '2026-07-04T09:05:00.000Z' },
}

describe('lifecycle email templates', () => {
  it('every key has a one-line subject, both parts, and the unsubscribe link in both', () => {
    for (const key of Object.keys(samples) as EmailPreferenceKey[]) {
      const email = renderLifecycleEmail(key, { ...common, ...samples[key] } as never)
      expect(email.subject, key).toMatch(/^Acme: \S/)
      expect(email.subject, key).not.toMatch(/\n/)
      expect(email.text, key).toContain(`Unsubscribe from these emails: ${unsubscribeUrl}`)
      expect(email.html, key).toContain(`<a href="${escapeHtml(unsubscribeUrl)}" style="color:#666">`)
      expect(email.html, key).toMatch(/^<!doctype html>/)
      expect(email.text, key).toContain('You get this email as a member of Acme.')
    }
  })

  it('says the key-specific facts', () => {
    const render = <K extends EmailPreferenceKey>(key: K) =>
      renderLifecycleEmail(key, { ...common, ...samples[key] } as never)
    expect(render('credits_low').subject).toBe('Acme: credits are running low (1,250 left)')
    expect(render('credits_exhausted').text).toContain('(balance: -3)')
    expect(render('subscription_canceled').text).toContain('It stays active until March 5, 2026.')
    expect(render('payment_failed').text).toContain(
      'A payment of $49.00 for the Growth subscription of Acme failed.',
    )
    expect(
      renderLifecycleEmail('payment_failed', { organizationName: 'Acme', unsubscribeUrl }).text,
    ).toContain('A payment for Acme failed.')
    const receipt = render('renewal_receipt')
    expect(receipt.text).toContain('Amount: ¥4,900')
    expect(receipt.text).toContain('Next renewal: April 1, 2026')
    expect(receipt.text).toContain('See the invoice: https://pay.example.com/invoice/1')
    expect(render('first_visitor_identified').text).toContain(
      'Name: Jane Doe\nEmail: jane@globex.test\nCompany: Globex',
    )
    // Which integration, the day (and hour) it stops, and the way to reconnect it.
    const reconnect = render('integration_reconnect')
    expect(reconnect.subject).toBe('Acme: reconnect Social ads before July 4, 2026')
    expect(reconnect.text).toContain('The Social ads connection of Acme stops working on July 4, 2026.')
    expect(reconnect.text).toContain('Integration: Social ads\nStops working: July 4, 2026, 09:05 UTC')
    expect(reconnect.text).toContain('Reconnect Social ads: https://app.example.com')
    expect(reconnect.html).toContain('<a href="https://app.example.com">Reconnect Social ads</a>')
  })

  it('leaves out missing details and the link when there is no usable appUrl', () => {
    const email = renderLifecycleEmail('first_visitor_identified', {
      organizationName: 'Acme',
      unsubscribeUrl,
      appUrl: 'javascript:alert(1)',
      visitor: { email: 'jane@globex.test', name: '  ' },
    })
    expect(email.text).not.toContain('Name:')
    expect(email.text).toContain('Email: jane@globex.test')
    expect(email.text).not.toContain('See your visitors')
    expect(email.html).not.toContain('javascript:')
    expect(email.html).not.toContain('<td style="padding:2px 16px 2px 0;color:#666">Name</td>')
  })

  it('escapes every value in the HTML part; the subject is one line', () => {
    const email = renderLifecycleEmail('subscription_activated', {
      organizationName: '<script>alert("x")</script>\r\nBcc: evil@x.test',
      plan: "<b>Pro</b> & 'more'",
      unsubscribeUrl: 'https://id.example.com/email/unsubscribe?token=a"b<c',
    })
    expect(email.subject).toBe(
      '<script>alert("x")</script> Bcc: evil@x.test: your <b>Pro</b> & \'more\' subscription is active',
    )
    expect(email.html).not.toMatch(/<script|<b>/)
    expect(email.html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;')
    expect(email.html).toContain('&lt;b&gt;Pro&lt;/b&gt; &amp; &#39;more&#39;')
    expect(email.html).toContain('href="https://id.example.com/email/unsubscribe?token=a&quot;b&lt;c"')
    expect(email.text).toContain("<b>Pro</b> & 'more'")
  })

  it('refuses an unsubscribe URL that is not http(s): every email must carry a working link', () => {
    expect(() =>
      renderLifecycleEmail('credits_low', {
        organizationName: 'Acme',
        balance: 1,
        unsubscribeUrl: 'javascript:x',
      }),
    ).toThrow(/unsubscribeUrl/)
  })
})
