/**
 * Redis pubsub. A connection in subscriber mode cannot run other commands, so subscriptions use a
 * dedicated connection, opened on the first `subscribe`; `publish` uses the shared command connection.
 */
import type { Redis } from 'ioredis'
import { type CoordinationErrorHandler, callListener } from './listeners.js'
import type { PubSub } from './ports.js'
import { closeConnection } from './redis-connection.js'

interface Subscription {
  listener: (message: string) => void
}

interface ChannelState {
  subscriptions: Set<Subscription>
  /** The SUBSCRIBE for this channel; every subscriber waits for it before its first message. */
  subscribed: Promise<unknown>
}

export class RedisPubSub implements PubSub {
  readonly #publisher: Redis
  readonly #openSubscriber: () => Redis
  readonly #channelPrefix: string
  readonly #onError: CoordinationErrorHandler
  /** Keyed by the prefixed channel name, as Redis reports it. */
  readonly #channels = new Map<string, ChannelState>()
  #subscriber: Redis | undefined
  #closed = false

  constructor(
    publisher: Redis,
    openSubscriber: () => Redis,
    channelPrefix: string,
    onError: CoordinationErrorHandler,
  ) {
    this.#publisher = publisher
    this.#openSubscriber = openSubscriber
    this.#channelPrefix = channelPrefix
    this.#onError = onError
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.#publisher.publish(this.#channelPrefix + channel, message)
  }

  async subscribe(channel: string, listener: (message: string) => void): Promise<() => Promise<void>> {
    if (this.#closed) throw new Error('The pubsub is closed')
    const subscriber = this.#connect()
    const fullChannel = this.#channelPrefix + channel
    // Decisions to SUBSCRIBE/UNSUBSCRIBE are taken synchronously and the commands share one connection,
    // so Redis sees them in the same order as this map changes, even when calls overlap.
    let state = this.#channels.get(fullChannel)
    if (!state) {
      state = { subscriptions: new Set(), subscribed: subscriber.subscribe(fullChannel) }
      this.#channels.set(fullChannel, state)
    }
    const subscription: Subscription = { listener }
    state.subscriptions.add(subscription)
    const unsubscribe = async (): Promise<void> => {
      if (!state.subscriptions.delete(subscription)) return
      if (state.subscriptions.size > 0 || this.#channels.get(fullChannel) !== state) return
      this.#channels.delete(fullChannel)
      await subscriber.unsubscribe(fullChannel)
    }
    try {
      await state.subscribed
    } catch (error) {
      await unsubscribe().catch(() => undefined)
      throw error
    }
    return unsubscribe
  }

  /** Drops every subscription and closes the subscriber connection. */
  async close(): Promise<void> {
    this.#closed = true
    this.#channels.clear()
    if (this.#subscriber) await closeConnection(this.#subscriber)
  }

  #connect(): Redis {
    if (this.#subscriber) return this.#subscriber
    const subscriber = this.#openSubscriber()
    subscriber.on('message', (channel: string, message: string) => {
      const state = this.#channels.get(channel)
      if (!state) return
      for (const { listener } of [...state.subscriptions]) {
        callListener(listener, [message], this.#onError, `pubsub listener on "${channel}"`)
      }
    })
    this.#subscriber = subscriber
    return subscriber
  }
}
