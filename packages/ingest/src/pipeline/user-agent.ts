// Device, browser and OS from the User-Agent header (ua-parser-js 1.x, MIT; 2.x is AGPL).

import { createBoundedCache } from '@visitor-id/core/bounded-cache'
import { UAParser } from 'ua-parser-js'

export interface UserAgentInfo {
  deviceType: string
  browser: string
  browserVersion: string
  os: string
  osVersion: string
  deviceModel: string
}

const cache = createBoundedCache<UserAgentInfo>(10_000)

/** Parses a user agent (cached). Desktop browsers report no device type: we call them `desktop`. */
export function parseUserAgent(userAgent: string): UserAgentInfo {
  const cached = cache.get(userAgent)
  if (cached) return cached
  const result = new UAParser(userAgent).getResult()
  const model = [result.device.vendor, result.device.model].filter(Boolean).join(' ')
  return cache.set(userAgent, {
    deviceType: result.device.type ?? (result.os.name || result.browser.name ? 'desktop' : ''),
    browser: result.browser.name ?? '',
    browserVersion: result.browser.version ?? '',
    os: result.os.name ?? '',
    osVersion: result.os.version ?? '',
    deviceModel: model.slice(0, 128),
  })
}
