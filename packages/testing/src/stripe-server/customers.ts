// Customers and their cards: as the API answers them, the customer and card a checkout makes, and
// the deletion Stripe's dashboard does.
import type Stripe from 'stripe'
import {
  type CustomerState,
  newId,
  type PaymentMethodState,
  type SessionState,
  type Shape,
  type StripeState,
} from './state.js'

export const renderPaymentMethod = (method: PaymentMethodState) =>
  ({
    id: method.id,
    object: 'payment_method',
    type: 'card',
    created: method.created,
    customer: method.customer,
    card: { brand: 'visa', last4: method.last4, exp_month: 12, exp_year: 2034 },
  }) satisfies Shape<Stripe.PaymentMethod>

export function renderCustomer(state: StripeState, customer: CustomerState, expand: string[]) {
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
          ? renderPaymentMethod(state.paymentMethods.get(method)!)
          : method,
    },
  } satisfies Shape<Stripe.Customer>
}

/** The session's own customer when it named one, or a new one with the options' email. */
export function payingCustomer(
  state: StripeState,
  session: SessionState,
  created: number,
  options: { email?: string; address?: Partial<Stripe.Address> },
): CustomerState {
  let customer = session.customer ? state.customers.get(session.customer) : undefined
  if (!customer) {
    customer = {
      id: newId('cus'),
      created,
      email: options.email ?? 'billing@example.com',
      address: null,
      defaultPaymentMethod: null,
      deleted: false,
    }
    state.customers.set(customer.id, customer)
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
  return customer
}

/** A card the customer pays with, made their default. */
export function addDefaultCard(
  state: StripeState,
  customer: CustomerState,
  created: number,
  last4: string,
): PaymentMethodState {
  const method: PaymentMethodState = { id: newId('pm'), created, customer: customer.id, last4 }
  state.paymentMethods.set(method.id, method)
  customer.defaultPaymentMethod = method.id
  return method
}

/** The customer is deleted in the dashboard: retrieving it answers `{ id, object, deleted: true }`. */
export function deleteCustomer(state: StripeState, customerId: string): void {
  const customer = state.customers.get(customerId)
  if (!customer) throw new Error(`stripe server: no customer ${customerId}`)
  customer.deleted = true
}
