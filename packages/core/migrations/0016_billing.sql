-- Subscription billing (DESIGN.md, "Billing").

-- The service's copy of each organization's subscription, as the provider last reported it, plus
-- what the service derives: `b2b_until` keeps a B2B organization `plus_employee` until the end of
-- the period it paid for after it left the B2B plan (then a sweep makes it `standard`).
CREATE TABLE IF NOT EXISTS subscriptions {{on_cluster}} (
  organization_id UUID,
  provider LowCardinality(String),
  customer_id String,
  subscription_id String,
  plan_id String,
  price_id String,
  product_id String,
  status LowCardinality(String),
  current_period_end DateTime64(3, 'UTC'),
  cancel_at_period_end UInt8,
  b2b_until Nullable(DateTime64(3, 'UTC')),
  created_at DateTime64(3, 'UTC'),
  updated_at DateTime64(3, 'UTC'),
  version UInt64
) ENGINE = {{global:ReplacingMergeTree(version)}}
ORDER BY organization_id;

-- The local provider's own objects (checkout and portal sessions, subscriptions), as JSON: what
-- Stripe would keep for the `stripe` provider.
CREATE TABLE IF NOT EXISTS billing_local_objects {{on_cluster}} (
  id String,
  kind LowCardinality(String),
  organization_id UUID,
  data String,
  created_at DateTime64(3, 'UTC'),
  version UInt64
) ENGINE = {{global:ReplacingMergeTree(version)}}
ORDER BY id;

-- Provider webhook events already acted on, by the provider's event id (a redelivery is acted on
-- once). Stripe stops redelivering after 3 days; kept 30.
CREATE TABLE IF NOT EXISTS billing_webhook_events {{on_cluster}} (
  event_id String,
  type LowCardinality(String),
  received_at DateTime64(3, 'UTC')
) ENGINE = {{global:ReplacingMergeTree}}
ORDER BY event_id
TTL toDateTime(received_at) + INTERVAL 30 DAY;
