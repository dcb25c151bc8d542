// A local stand-in for api.stripe.com, for tests of the Stripe billing provider with the real SDK:
// the few endpoints the adapter calls, form-encoded requests read as Stripe reads them, answers
// shaped like the pinned API version's objects (only the fields we read, checked against the SDK's
// typings), Stripe's error bodies. It keeps state, so a checkout completed here is a subscription
// the adapter can then retrieve, change and cancel; helpers play Stripe's side (a customer paying,
// a renewal, a failed payment) and sign webhooks as Stripe does.
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import Stripe from 'stripe'

/** A request the server received, its form body (or query) read into nested objects. */
export interface StripeServerRequest {
  method: string
  path: string
  query: Record<string, unknown>
  body: Record<string, unknown>
  /** The `Stripe-Version` header: the adapter's pinned version. */
  apiVersion: string | undefined
}

export interface StripeServerOptions {
  /** The key requests must bear; a random `sk_test_...` by default. */
  secretKey?: string
}

/** What `completeCheckout` makes up for the customer who paid. */
export interface CompleteCheckoutOptions {
  /** Of the customer's default card; 4242 by default. */
  last4?: string
  email?: string
  address?: Partial<Stripe.Address>
}

export interface InvoiceOptions {
  /** In cents; 4900 by default. */
  amount?: number
  currency?: string
}

/**
 * A fragment of a Stripe object: any field it has must exist, with its type, in the pinned API
 * version's typings; so a field that moved (as `current_period_end` did) fails the build here.
 */
type Shape<T> = T extends readonly (infer U)[]
  ? Shape<U>[]
  : T extends object
    ? { [K in keyof T]?: Shape<T[K]> }
    : T

interface SessionState {
  id: string
  created: number
  mode: string
  price: string
  quantity: number
  clientReferenceId: string | null
  metadata: Record<string, string>
  subscriptionMetadata: Record<string, string>
  successUrl: string
  cancelUrl: string | null
  customer: string | null
  status: 'open' | 'complete'
  paymentStatus: 'unpaid' | 'paid'
  subscription: string | null
}

interface SubscriptionState {
  id: string
  created: number
  customer: string
  metadata: Record<string, string>
  itemId: string
  price: string
  status: Stripe.Subscription.Status
  periodStart: number
  periodEnd: number
  cancelAtPeriodEnd: boolean
  canceledAt: number | null
  endedAt: number | null
  defaultPaymentMethod: string | null
}

interface CustomerState {
  id: string
  created: number
  email: string | null
  address: Stripe.Address | null
  defaultPaymentMethod: string | null
  deleted: boolean
}

interface PaymentMethodState {
  id: string
  created: number
  customer: string
  last4: string
}

/** Thrown by a handler: answered with Stripe's error body. */
class StripeServerError extends Error {
  constructor(
    readonly status: number,
    readonly body: { type: string; message: string; code?: string; param?: string },
  ) {
    super(body.message)
  }
}

/**
 * Starts the server on 127.0.0.1 and a free port.
 *
 * @example
 * const stripe = await startStripeServer()
 * const provider = createStripeProvider({ ...stripe, webhookSecret: 'whsec_test' })
 * const { id } = await provider.createCheckout({ organizationId, plan, successUrl, cancelUrl })
 * stripe.completeCheckout(id)
 * const { body, signature } = stripe.signedWebhook(stripe.event('checkout.session.completed', ...), 'whsec_test')
 */
export async function startStripeServer(options: StripeServerOptions = {}) {
  const secretKey = options.secretKey ?? `sk_test_${randomBytes(12).toString('hex')}`
  const requests: StripeServerRequest[] = []
  const sessions = new Map<string, SessionState>()
  const subscriptions = new Map<string, SubscriptionState>()
  const customers = new Map<string, CustomerState>()
  const paymentMethods = new Map<string, PaymentMethodState>()
  /** The answers of POSTs by `Idempotency-Key`: the SDK's retries must not make a second session. */
  const idempotent = new Map<string, { status: number; body: unknown }>()

  // --- Rendering, as the API answers -------------------------------------------------------------

  const renderPaymentMethod = (method: PaymentMethodState) =>
    ({
      id: method.id,
      object: 'payment_method',
      type: 'card',
      created: method.created,
      customer: method.customer,
      card: { brand: 'visa', last4: method.last4, exp_month: 12, exp_year: 2034 },
    }) satisfies Shape<Stripe.PaymentMethod>

  const renderCustomer = (customer: CustomerState, expand: string[]) => {
    if (customer.deleted) {
      return { id: customer.id, object: 'customer', deleted: true } satisfies Shape<Stripe.DeletedCustomer>
    }
    const method = customer.defaultPaymentMethod
    return {
      id: customer.id,
      object: 'customer',
      created: customer.created,
      email: customer.email,
      address: customer.address,
      invoice_settings: {
        default_payment_method:
          method && expand.includes('invoice_settings.default_payment_method')
            ? renderPaymentMethod(paymentMethods.get(method)!)
            : method,
      },
    } satisfies Shape<Stripe.Customer>
  }

  const renderSubscription = (sub: SubscriptionState) =>
    ({
      id: sub.id,
      object: 'subscription',
      created: sub.created,
      customer: sub.customer,
      metadata: sub.metadata,
      status: sub.status,
      cancel_at_period_end: sub.cancelAtPeriodEnd,
      canceled_at: sub.canceledAt,
      ended_at: sub.endedAt,
      default_payment_method: sub.defaultPaymentMethod,
      items: {
        object: 'list',
        data: [
          {
            id: sub.itemId,
            object: 'subscription_item',
            subscription: sub.id,
            price: { id: sub.price, object: 'price' },
            quantity: 1,
            // Per item since API version 2025-03-31.basil, not on the subscription.
            current_period_start: sub.periodStart,
            current_period_end: sub.periodEnd,
          },
        ],
        has_more: false,
        url: `/v1/subscription_items?subscription=${sub.id}`,
      },
    }) satisfies Shape<Stripe.Subscription>

  const renderSession = (session: SessionState, expand: string[]) =>
    ({
      id: session.id,
      object: 'checkout.session',
      created: session.created,
      mode: session.mode,
      client_reference_id: session.clientReferenceId,
      metadata: session.metadata,
      success_url: session.successUrl,
      cancel_url: session.cancelUrl,
      customer: session.customer,
      status: session.status,
      payment_status: session.paymentStatus,
      subscription:
        session.subscription && expand.includes('subscription')
          ? renderSubscription(subscriptions.get(session.subscription)!)
          : session.subscription,
      url: session.status === 'open' ? `https://checkout.stripe.com/c/pay/${session.id}` : null,
    }) satisfies Shape<Stripe.Checkout.Session>

  const renderInvoice = (
    sub: SubscriptionState,
    outcome: 'paid' | 'failed',
    reason: Stripe.Invoice.BillingReason,
    { amount = 4900, currency = 'usd' }: InvoiceOptions,
  ) => {
    const id = newId('in')
    return {
      id,
      object: 'invoice',
      created: now(),
      customer: sub.customer,
      currency,
      status: outcome === 'paid' ? 'paid' : 'open',
      amount_due: amount,
      amount_paid: outcome === 'paid' ? amount : 0,
      amount_remaining: outcome === 'paid' ? 0 : amount,
      attempt_count: 1,
      billing_reason: reason,
      hosted_invoice_url: `https://invoice.stripe.com/i/${id}`,
      // Where the subscription is since API version 2025-03-31.basil (no more `invoice.subscription`).
      parent: {
        type: 'subscription_details',
        quote_details: null,
        subscription_details: { subscription: sub.id, metadata: sub.metadata },
      },
      lines: {
        object: 'list',
        data: [
          {
            id: newId('il'),
            object: 'line_item',
            invoice: id,
            amount,
            currency,
            quantity: 1,
            period: { start: sub.periodStart, end: sub.periodEnd },
            pricing: {
              type: 'price_details',
              price_details: { price: sub.price },
              unit_amount_decimal: null,
            },
            parent: {
              type: 'subscription_item_details',
              invoice_item_details: null,
              subscription_item_details: {
                subscription: sub.id,
                subscription_item: sub.itemId,
                invoice_item: null,
                proration: false,
                proration_details: { credited_items: null },
              },
            },
          },
        ],
        has_more: false,
        url: `/v1/invoices/${id}/lines`,
      },
    } satisfies Shape<Stripe.Invoice>
  }

  // --- The endpoints -----------------------------------------------------------------------------

  const find = <T>(map: Map<string, T>, id: string, kind: string): T => {
    const found = map.get(id)
    if (!found) throw missing(kind, id)
    return found
  }

  const createSession = (body: Record<string, unknown>) => {
    const mode = text(body.mode)
    if (!mode) throw parameterMissing('mode')
    const successUrl = text(body.success_url)
    if (!successUrl) throw parameterMissing('success_url')
    const item = (Array.isArray(body.line_items) ? body.line_items[0] : undefined) as
      | Record<string, unknown>
      | undefined
    const price = text(item?.price)
    if (!price) throw parameterMissing('line_items[0][price]')
    const customer = text(body.customer) ?? null
    if (customer && !customers.get(customer)) throw missingParam('customer', customer)
    const session: SessionState = {
      id: newId('cs_test'),
      created: now(),
      mode,
      price,
      quantity: Number(text(item?.quantity) ?? 1),
      clientReferenceId: text(body.client_reference_id) ?? null,
      metadata: strings(body.metadata),
      subscriptionMetadata: strings(
        (body.subscription_data as Record<string, unknown> | undefined)?.metadata,
      ),
      successUrl,
      cancelUrl: text(body.cancel_url) ?? null,
      customer,
      status: 'open',
      paymentStatus: 'unpaid',
      subscription: null,
    }
    sessions.set(session.id, session)
    return renderSession(session, expandOf(body))
  }

  const updateSubscription = (sub: SubscriptionState, body: Record<string, unknown>) => {
    if (sub.status === 'canceled') {
      throw new StripeServerError(400, {
        type: 'invalid_request_error',
        message: `A canceled subscription can only update its cancellation_details and metadata (${sub.id}).`,
      })
    }
    const items = Array.isArray(body.items) ? (body.items as Record<string, unknown>[]) : []
    for (const item of items) {
      if (text(item.id) !== sub.itemId) {
        throw new StripeServerError(400, {
          type: 'invalid_request_error',
          param: 'items',
          message: `This server keeps one item per subscription; ${String(item.id)} is not ${sub.itemId}.`,
        })
      }
      const price = text(item.price)
      if (price) sub.price = price
    }
    if (body.cancel_at_period_end !== undefined) sub.cancelAtPeriodEnd = body.cancel_at_period_end === 'true'
    Object.assign(sub.metadata, strings(body.metadata))
    return renderSubscription(sub)
  }

  const createPortal = (body: Record<string, unknown>) => {
    const customer = text(body.customer)
    if (!customer) throw parameterMissing('customer')
    if (!customers.get(customer) || customers.get(customer)!.deleted) throw missingParam('customer', customer)
    const id = newId('bps')
    return {
      id,
      object: 'billing_portal.session',
      created: now(),
      customer,
      return_url: text(body.return_url) ?? null,
      url: `https://billing.stripe.com/p/session/test_${id}`,
    } satisfies Shape<Stripe.BillingPortal.Session>
  }

  const route = (method: string, path: string, params: Record<string, unknown>): unknown => {
    /** The id in `/v1/<collection>/<id>`, when the path is that. */
    const idIn = (collection: string) => {
      const id = path.startsWith(`/v1/${collection}/`) ? path.slice(collection.length + 5) : ''
      return id && !id.includes('/') ? decodeURIComponent(id) : undefined
    }
    if (method === 'POST' && path === '/v1/checkout/sessions') return createSession(params)
    const sessionId = idIn('checkout/sessions')
    if (method === 'GET' && sessionId) {
      return renderSession(find(sessions, sessionId, 'checkout.session'), expandOf(params))
    }
    const subscriptionId = idIn('subscriptions')
    if (subscriptionId && (method === 'GET' || method === 'POST')) {
      const sub = find(subscriptions, subscriptionId, 'subscription')
      return method === 'GET' ? renderSubscription(sub) : updateSubscription(sub, params)
    }
    if (method === 'POST' && path === '/v1/billing_portal/sessions') return createPortal(params)
    const customerId = idIn('customers')
    if (method === 'GET' && customerId) {
      return renderCustomer(find(customers, customerId, 'customer'), expandOf(params))
    }
    const paymentMethodId = idIn('payment_methods')
    if (method === 'GET' && paymentMethodId) {
      return renderPaymentMethod(find(paymentMethods, paymentMethodId, 'payment_method'))
    }
    throw new StripeServerError(404, {
      type: 'invalid_request_error',
      message: `Unrecognized request URL (${method}: ${path}). This test server serves only what the billing provider calls.`,
    })
  }

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1')
    const method = request.method ?? 'GET'
    const query = parseStripeForm(url.search.slice(1))
    const body = parseStripeForm(await readBody(request))
    const version = request.headers['stripe-version']
    requests.push({
      method,
      path: url.pathname,
      query,
      body,
      apiVersion: Array.isArray(version) ? version[0] : version,
    })
    const reply = (status: number, payload: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json', 'request-id': newId('req') })
      response.end(JSON.stringify(payload, null, 2))
    }
    if (request.headers.authorization !== `Bearer ${secretKey}`) {
      // Stripe names a wrong key by its last four characters only.
      const given = /^Bearer (.*)$/.exec(request.headers.authorization ?? '')?.[1] ?? ''
      return reply(401, {
        error: {
          type: 'invalid_request_error',
          message: given ? `Invalid API Key provided: ${maskKey(given)}` : 'You did not provide an API key.',
        },
      })
    }
    const key = request.headers['idempotency-key']
    const idempotencyKey = method === 'POST' && typeof key === 'string' ? key : undefined
    const replayed = idempotencyKey ? idempotent.get(idempotencyKey) : undefined
    if (replayed) return reply(replayed.status, replayed.body)
    let status = 200
    let payload: unknown
    try {
      payload = route(method, url.pathname, { ...query, ...body })
    } catch (error) {
      if (!(error instanceof StripeServerError)) throw error
      status = error.status
      payload = { error: error.body }
    }
    if (idempotencyKey) idempotent.set(idempotencyKey, { status, body: payload })
    reply(status, payload)
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      response.writeHead(500, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ error: { type: 'api_error', message: String(error) } }))
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo

  // --- Stripe's side, for tests --------------------------------------------------------------------

  /**
   * The customer pays: a customer with a default card (the session's own, when it named one), the
   * subscription with the session's `subscription_data.metadata`, the session complete and paid.
   */
  const completeCheckout = (sessionId: string, options: CompleteCheckoutOptions = {}) => {
    const session = sessions.get(sessionId)
    if (!session) throw new Error(`stripe server: no checkout session ${sessionId}`)
    if (session.status === 'complete') throw new Error(`stripe server: ${sessionId} is already complete`)
    const created = now()
    let customer = session.customer ? customers.get(session.customer) : undefined
    if (!customer) {
      customer = {
        id: newId('cus'),
        created,
        email: options.email ?? 'billing@example.com',
        address: null,
        defaultPaymentMethod: null,
        deleted: false,
      }
      customers.set(customer.id, customer)
    }
    if (options.address) {
      customer.address = {
        line1: null,
        line2: null,
        city: null,
        state: null,
        postal_code: null,
        country: null,
        ...options.address,
      }
    }
    const method: PaymentMethodState = {
      id: newId('pm'),
      created,
      customer: customer.id,
      last4: options.last4 ?? '4242',
    }
    paymentMethods.set(method.id, method)
    customer.defaultPaymentMethod = method.id
    const sub: SubscriptionState = {
      id: newId('sub'),
      created,
      customer: customer.id,
      metadata: { ...session.subscriptionMetadata },
      itemId: newId('si'),
      price: session.price,
      status: 'active',
      periodStart: created,
      periodEnd: addMonth(created),
      cancelAtPeriodEnd: false,
      canceledAt: null,
      endedAt: null,
      defaultPaymentMethod: method.id,
    }
    subscriptions.set(sub.id, sub)
    Object.assign(session, {
      customer: customer.id,
      status: 'complete',
      paymentStatus: 'paid',
      subscription: sub.id,
    })
    return {
      session: renderSession(session, []),
      subscription: renderSubscription(sub),
      customer: renderCustomer(customer, []),
      paymentMethod: renderPaymentMethod(method),
    }
  }

  const subscription = (id: string) => {
    const sub = subscriptions.get(id)
    if (!sub) throw new Error(`stripe server: no subscription ${id}`)
    return sub
  }

  /**
   * A paid invoice of the subscription. A renewal (`subscription_cycle`, the default) first moves
   * the subscription to its next period, as Stripe does; paying makes a past-due one active again.
   */
  const paidInvoice = (
    subscriptionId: string,
    reason: Stripe.Invoice.BillingReason = 'subscription_cycle',
    options: InvoiceOptions = {},
  ) => {
    const sub = subscription(subscriptionId)
    if (reason === 'subscription_cycle') nextPeriod(sub)
    if (sub.status === 'past_due' || sub.status === 'incomplete') sub.status = 'active'
    return renderInvoice(sub, 'paid', reason, options)
  }

  /** A failed payment: a renewal's by default (the new period starts all the same); the subscription is past due. */
  const failedInvoice = (
    subscriptionId: string,
    reason: Stripe.Invoice.BillingReason = 'subscription_cycle',
    options: InvoiceOptions = {},
  ) => {
    const sub = subscription(subscriptionId)
    if (reason === 'subscription_cycle') nextPeriod(sub)
    sub.status = 'past_due'
    return renderInvoice(sub, 'failed', reason, options)
  }

  /** The subscription is over (its period ended after a cancellation, or Stripe gave up on payment). */
  const endSubscription = (subscriptionId: string) => {
    const sub = subscription(subscriptionId)
    sub.status = 'canceled'
    sub.endedAt = now()
    sub.canceledAt ??= sub.endedAt
    return renderSubscription(sub)
  }

  /** Stripe moves the subscription to another status (its dunning gives up: `unpaid`; a pause: `paused`...). */
  const setSubscriptionStatus = (subscriptionId: string, status: Stripe.Subscription.Status) => {
    subscription(subscriptionId).status = status
    return renderSubscription(subscription(subscriptionId))
  }

  /** The customer is deleted in the dashboard: retrieving it answers `{ id, object, deleted: true }`. */
  const deleteCustomer = (customerId: string) => {
    const customer = customers.get(customerId)
    if (!customer) throw new Error(`stripe server: no customer ${customerId}`)
    customer.deleted = true
  }

  /** An Event of the pinned API version, as a webhook delivers it. */
  const event = <T extends { id: string }>(type: string, object: T) => ({
    id: newId('evt'),
    object: 'event' as const,
    // The version the SDK pins, which core's provider speaks (its stripeApiVersion satisfies
    // Stripe.LatestApiVersion, the type of this constant).
    api_version: Stripe.API_VERSION,
    created: now(),
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  })

  /** The body and `Stripe-Signature` header Stripe would send for the event to an endpoint with this secret. */
  const signedWebhook = (payload: { id: string; type: string }, webhookSecret: string) => {
    const body = JSON.stringify(payload, null, 2)
    return {
      body,
      signature: Stripe.webhooks.generateTestHeaderString({ payload: body, secret: webhookSecret }),
    }
  }

  return {
    host: '127.0.0.1' as const,
    port,
    protocol: 'http' as const,
    secretKey,
    requests,
    completeCheckout,
    paidInvoice,
    failedInvoice,
    endSubscription,
    setSubscriptionStatus,
    deleteCustomer,
    event,
    signedWebhook,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()))
        // The SDK keeps its connections alive; without this, close waits for them to time out.
        server.closeAllConnections()
      }),
  }
}

export type StripeServer = Awaited<ReturnType<typeof startStripeServer>>

/**
 * A form body as Stripe reads it: `line_items[0][price]=p` is `{ line_items: [{ price: 'p' }] }`,
 * `expand[]=a` (or `expand[0]=a`) is `{ expand: ['a'] }`. Values stay strings, as on the wire.
 */
export function parseStripeForm(text: string): Record<string, unknown> {
  const root: Record<string, unknown> = {}
  for (const [key, value] of new URLSearchParams(text)) {
    const [head = '', ...rest] = key.split('[')
    const path = [head, ...rest.map((part) => part.replace(/]$/, ''))]
    if (path.some((part) => part === '__proto__' || part === 'constructor' || part === 'prototype')) continue
    let node: Record<string, unknown> | unknown[] = root
    path.forEach((part, index) => {
      const container = node as Record<string, unknown>
      const slot = part === '' && Array.isArray(node) ? String(node.length) : part
      if (index === path.length - 1) {
        container[slot] = value
        return
      }
      const next = path[index + 1]!
      container[slot] ??= next === '' || /^\d+$/.test(next) ? [] : {}
      node = container[slot] as Record<string, unknown> | unknown[]
    })
  }
  return root
}

const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`

const now = () => Math.floor(Date.now() / 1000)

/** A monthly period's end: the same day of the next month, as Stripe bills (clamped at its end). */
function addMonth(unixSeconds: number): number {
  const start = new Date(unixSeconds * 1000)
  const end = new Date(start)
  end.setUTCMonth(start.getUTCMonth() + 1)
  if (end.getUTCDate() !== start.getUTCDate()) end.setUTCDate(0)
  return Math.floor(end.getTime() / 1000)
}

function nextPeriod(sub: SubscriptionState) {
  sub.periodStart = sub.periodEnd
  sub.periodEnd = addMonth(sub.periodEnd)
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined

const strings = (value: unknown): Record<string, string> =>
  Object.fromEntries(
    Object.entries(value && typeof value === 'object' ? value : {}).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    ),
  )

const expandOf = (params: Record<string, unknown>): string[] =>
  Array.isArray(params.expand) ? params.expand.filter((value) => typeof value === 'string') : []

const maskKey = (key: string) => `${key.slice(0, key.indexOf('_', 3) + 1)}${'*'.repeat(4)}${key.slice(-4)}`

const missing = (kind: string, id: string) =>
  new StripeServerError(404, {
    type: 'invalid_request_error',
    code: 'resource_missing',
    param: 'id',
    message: `No such ${kind}: '${id}'`,
  })

const missingParam = (param: string, id: string) =>
  new StripeServerError(400, {
    type: 'invalid_request_error',
    code: 'resource_missing',
    param,
    message: `No such ${param}: '${id}'`,
  })

const parameterMissing = (param: string) =>
  new StripeServerError(400, {
    type: 'invalid_request_error',
    code: 'parameter_missing',
    param,
    message: `Missing required param: ${param}.`,
  })

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    request.on('error', reject)
  })
}
