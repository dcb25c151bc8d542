// The public face of core's events domain: what other packages import as @visitor-id/core/events.
export {
  appendEvents,
  appendNewEvents,
  dispatchEvents,
  type EventJob,
  type EventProcessing,
  type EventProcessingOptions,
  type EventRetry,
  type EventType,
  eventIdOf,
  eventJobName,
  InFlightEvents,
  markEventsDispatched,
  readEvents,
  type StoredEvent,
  startEventProcessing,
} from './events.js'
