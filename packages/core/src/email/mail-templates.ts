// The lifecycle emails' words (docs/decisions.md, "Email"): one small template per preference key, each a
// subject, a few plain-text paragraphs, optional detail rows and an optional link. One layout turns
// that into the text part and the HTML part, so both always say the same thing. Templates only
// ever produce plain text: the layout HTML-escapes every paragraph and value as a whole, so a
// visitor called `<script>` or an organization named `A & B` can never become markup.
import type { EmailPreferenceKey } from './preferences.js'

/** What every lifecycle email needs. */
export interface LifecycleEmailCommon {
  organizationName: string
  /** The signed one-click link (mail-unsubscribe.ts, `unsubscribeUrl`); shown in both parts. */
  unsubscribeUrl: string
  /** The dashboard's address: with it, the email links there; without it, no link. */
  appUrl?: string | undefined
}

/** An amount in the currency's minor unit (cents), as payment providers report it. */
export interface MoneyAmount {
  minor: number
  /** ISO 4217, e.g. 'USD'. */
  currency: string
}

/** A date to show: a Date or an ISO 8601 string (shown as given when it is not a date). */
export type EmailDate = Date | string

/** The fields each key's template reads, besides the common ones. */
export interface LifecycleEmailFields {
  first_visitor_identified: {
    /** Whatever identification found; missing fields are left out. */
    visitor: {
      name?: string | undefined
      email?: string | undefined
      company?: string | undefined
      title?: string | undefined
    }
  }
  credits_low: { balance: number }
  credits_exhausted: { balance: number }
  subscription_activated: { plan: string }
  subscription_canceled: { plan: string; endsAt?: EmailDate | undefined }
  payment_failed: { plan?: string | undefined; amount?: MoneyAmount | undefined }
  renewal_receipt: {
    plan: string
    amount: MoneyAmount
    periodEnd?: EmailDate | undefined
    /** The payment provider's hosted invoice, when there is one. */
    invoiceUrl?: string | undefined
  }
  integration_reconnect: {
    /** The integration's name as the organization sees it ('Social ads', or SOCIAL_ADS_NAME). */
    integration: string
    /** When its grant stops working. */
    expiresAt: EmailDate
  }
}

export type LifecycleEmailData<K extends EmailPreferenceKey> = LifecycleEmailCommon & LifecycleEmailFields[K]

export interface RenderedEmail {
  subject: string
  text: string
  html: string
}

/** What a template says, before the layout: all plain text. */
interface EmailContent {
  subject: string
  paragraphs: string[]
  /** Label and value pairs (a visitor's details, a receipt's lines). */
  details?: Array<[label: string, value: string | undefined]>
  link?: { label: string; url: string | undefined }
}

type Templates = { [K in EmailPreferenceKey]: (data: LifecycleEmailData<K>) => EmailContent }

const templates: Templates = {
  first_visitor_identified: ({ organizationName, visitor, appUrl }) => ({
    subject: `${organizationName}: your first visitor is identified`,
    paragraphs: [
      `${organizationName} identified its first website visitor.`,
      'Every identified visitor is listed in the dashboard with their company and contact details.',
    ],
    details: [
      ['Name', visitor.name],
      ['Email', visitor.email],
      ['Title', visitor.title],
      ['Company', visitor.company],
    ],
    link: { label: 'See your visitors', url: appUrl },
  }),
  credits_low: ({ organizationName, balance, appUrl }) => ({
    subject: `${organizationName}: credits are running low (${count(balance)} left)`,
    paragraphs: [
      `${organizationName} has ${count(balance)} identification ${plural(balance, 'credit')} left.`,
      'Each newly identified visitor uses one credit. Add credits to keep identifying visitors without a gap.',
    ],
    link: { label: 'Add credits', url: appUrl },
  }),
  credits_exhausted: ({ organizationName, balance, appUrl }) => ({
    subject: `${organizationName}: credits are used up`,
    paragraphs: [
      // The balance can be below zero when overage is allowed: say it rather than round it to 0.
      `${organizationName} has used all its identification credits (balance: ${count(balance)}).`,
      'Once any overage allowed is used too, new visitors are no longer identified as people until credits are added.',
    ],
    link: { label: 'Add credits', url: appUrl },
  }),
  subscription_activated: ({ organizationName, plan, appUrl }) => ({
    subject: `${organizationName}: your ${plan} subscription is active`,
    paragraphs: [`The ${plan} subscription of ${organizationName} is active. Thank you!`],
    link: { label: 'Open the dashboard', url: appUrl },
  }),
  subscription_canceled: ({ organizationName, plan, endsAt, appUrl }) => ({
    subject: `${organizationName}: your ${plan} subscription is canceled`,
    paragraphs: [
      endsAt
        ? `The ${plan} subscription of ${organizationName} is canceled. It stays active until ${date(endsAt)}.`
        : `The ${plan} subscription of ${organizationName} is canceled.`,
      'You can subscribe again at any time from the dashboard.',
    ],
    link: { label: 'Open the dashboard', url: appUrl },
  }),
  payment_failed: ({ organizationName, plan, amount, appUrl }) => ({
    subject: `${organizationName}: a payment failed`,
    paragraphs: [
      `A payment${amount ? ` of ${money(amount)}` : ''} for ${plan ? `the ${plan} subscription of ` : ''}${organizationName} failed.`,
      'Please check the payment method so the subscription continues.',
    ],
    link: { label: 'Update the payment method', url: appUrl },
  }),
  renewal_receipt: ({ organizationName, plan, amount, periodEnd, invoiceUrl, appUrl }) => ({
    subject: `${organizationName}: receipt for your ${plan} subscription`,
    paragraphs: [`The ${plan} subscription of ${organizationName} was renewed. Thank you!`],
    details: [
      ['Plan', plan],
      ['Amount', money(amount)],
      ['Next renewal', periodEnd ? date(periodEnd) : undefined],
    ],
    link: invoiceUrl
      ? { label: 'See the invoice', url: invoiceUrl }
      : { label: 'Open the dashboard', url: appUrl },
  }),
  // The link is the dashboard: its banner's Reconnect button starts the installation again.
  integration_reconnect: ({ organizationName, integration, expiresAt, appUrl }) => ({
    subject: `${organizationName}: reconnect ${integration} before ${date(expiresAt)}`,
    paragraphs: [
      `The ${integration} connection of ${organizationName} stops working on ${date(expiresAt)}.`,
      `Its authorization cannot renew itself: reconnect ${integration} from the dashboard before then (you authorize again on the platform). Audience syncs continue until that date; after it they fail until it is reconnected.`,
    ],
    details: [
      ['Integration', integration],
      ['Stops working', dateTime(expiresAt)],
    ],
    link: { label: `Reconnect ${integration}`, url: appUrl },
  }),
}

/**
 * The subject, text part and HTML part of one lifecycle email.
 *
 * @example
 * renderLifecycleEmail('credits_low', { organizationName: 'Acme', balance: 90, unsubscribeUrl })
 * // { subject: 'Acme: credits are running low (90 left)', text: '...', html: '<!doctype html>...' }
 */
export function renderLifecycleEmail<K extends EmailPreferenceKey>(
  key: K,
  data: LifecycleEmailData<K>,
): RenderedEmail {
  const template = templates[key] as (data: LifecycleEmailData<K>) => EmailContent
  if (!template) throw new Error(`no email template for "${key}"`)
  const content = template(data)
  const unsubscribeUrl = httpUrl(data.unsubscribeUrl)
  if (!unsubscribeUrl) throw new Error('unsubscribeUrl must be an http(s) URL')
  const linkUrl = httpUrl(content.link?.url)
  const link = content.link && linkUrl ? { label: content.link.label, url: linkUrl } : undefined
  // A value with a line break (a name pasted with one) must not break a paragraph or a header.
  const paragraphs = content.paragraphs.map(oneLine)
  const details = (content.details ?? []).filter((row): row is [string, string] => Boolean(row[1]?.trim()))
  // The words under the line: why this email came, and how to stop this kind (and only this kind).
  const footer = `You get this email as a member of ${oneLine(data.organizationName)}.`
  const laidOut = { subject: oneLine(content.subject), paragraphs, details, link, footer, unsubscribeUrl }
  return { subject: laidOut.subject, text: textPart(laidOut), html: htmlPart(laidOut) }
}

interface LaidOut {
  subject: string
  paragraphs: string[]
  details: Array<[string, string]>
  link: { label: string; url: string } | undefined
  footer: string
  unsubscribeUrl: string
}

function textPart(email: LaidOut): string {
  const blocks = [
    ...email.paragraphs,
    ...(email.details.length > 0
      ? [email.details.map(([label, value]) => `${label}: ${oneLine(value)}`).join('\n')]
      : []),
    ...(email.link ? [`${email.link.label}: ${email.link.url}`] : []),
    '--',
    `${email.footer}\nUnsubscribe from these emails: ${email.unsubscribeUrl}`,
  ]
  return `${blocks.join('\n\n')}\n`
}

// Inline styles only: most mail clients drop <style> blocks and every external stylesheet.
function htmlPart(email: LaidOut): string {
  const p = (text: string) => `<p style="margin:0 0 16px">${escapeHtml(text)}</p>`
  const rows = email.details
    .map(
      ([label, value]) =>
        `<tr><td style="padding:2px 16px 2px 0;color:#666">${escapeHtml(label)}</td><td style="padding:2px 0">${escapeHtml(oneLine(value))}</td></tr>`,
    )
    .join('')
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<title>${escapeHtml(email.subject)}</title></head>`,
    '<body style="margin:0;padding:24px;font-family:Arial,Helvetica,sans-serif;font-size:15px;line-height:1.5;color:#222">',
    ...email.paragraphs.map(p),
    ...(rows ? [`<table style="border-collapse:collapse;margin:0 0 16px">${rows}</table>`] : []),
    ...(email.link
      ? [
          `<p style="margin:0 0 16px"><a href="${escapeHtml(email.link.url)}">${escapeHtml(email.link.label)}</a></p>`,
        ]
      : []),
    '<hr style="border:none;border-top:1px solid #ddd;margin:24px 0 12px">',
    `<p style="margin:0;font-size:12px;color:#666">${escapeHtml(email.footer)} <a href="${escapeHtml(email.unsubscribeUrl)}" style="color:#666">Unsubscribe from these emails</a>.</p>`,
    '</body></html>',
    '',
  ].join('\n')
}

/**
 * Text made safe for HTML content and attribute values (double- or single-quoted).
 * @example escapeHtml('<a href="x">') // '&lt;a href=&quot;x&quot;&gt;'
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => htmlEntities[c] ?? c)
}

const htmlEntities: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

/** The URL when it is http(s) (a `javascript:` or malformed one is never linked), else undefined. */
function httpUrl(url: string | undefined): string | undefined {
  if (!url) return undefined
  try {
    const { protocol } = new URL(url)
    return protocol === 'http:' || protocol === 'https:' ? url : undefined
  } catch {
    return undefined
  }
}

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim()

const count = (n: number) => n.toLocaleString('en-US')

const plural = (n: number, word: string) => (Math.abs(n) === 1 ? word : `${word}s`)

/** 'March 5, 2026' (UTC: the same day whichever server sends it). */
function date(value: EmailDate): string {
  const parsed = value instanceof Date ? value : new Date(value)
  if (Number.isNaN(parsed.getTime())) return String(value)
  return parsed.toLocaleDateString('en-US', { dateStyle: 'long', timeZone: 'UTC' })
}

/** 'March 5, 2026, 14:30 UTC': when the hour matters (a grant that ends). */
function dateTime(value: EmailDate): string {
  const parsed = value instanceof Date ? value : new Date(value)
  if (Number.isNaN(parsed.getTime())) return String(value)
  const time = parsed.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit', timeZone: 'UTC' })
  return `${date(parsed)}, ${time} UTC`
}

/** '$49.00', '¥4,900', '€12.50': minor units divided by the currency's own number of decimals. */
export function money({ minor, currency }: MoneyAmount): string {
  try {
    const format = new Intl.NumberFormat('en-US', { style: 'currency', currency: currency.toUpperCase() })
    const decimals = format.resolvedOptions().maximumFractionDigits ?? 2
    return format.format(minor / 10 ** decimals)
  } catch {
    // An unknown currency code: still say the amount rather than fail the whole email.
    return `${(minor / 100).toFixed(2)} ${currency.toUpperCase()}`
  }
}
