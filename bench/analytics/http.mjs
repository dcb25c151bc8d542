// HTTP side of the analytics benchmark: one request at a time over a keep-alive connection, timed
// to the last byte of the body, and a CSV download counted line by line as it arrives.
import http from 'node:http'
import { rssBytes } from './server.mjs'

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })

/** GET `urlPath` with the API key; resolves with the status, the body and the milliseconds to its last byte. */
export function timedGet(base, urlPath, apiKey) {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const request = http.get(
      new URL(urlPath, base),
      { agent, headers: { 'x-api-key': apiKey } },
      (response) => {
        const chunks = []
        response.on('data', (chunk) => chunks.push(chunk))
        response.on('end', () =>
          resolve({
            status: response.statusCode,
            body: Buffer.concat(chunks).toString('utf8'),
            ms: performance.now() - started,
          }),
        )
        response.on('error', reject)
      },
    )
    request.on('error', reject)
  })
}

/**
 * True for the answer of a route nobody registered yet: 404 with the server's route-not-found body
 * (`code: route_not_found`, "Route GET /path not found"), or Fastify's own ("Route GET:/path not found").
 */
export function isRouteNotFound(status, body) {
  if (status !== 404) return false
  try {
    const parsed = JSON.parse(body)
    return parsed.code === 'route_not_found' || /^Route [A-Z]+:? ?\S+ not found/.test(String(parsed.message))
  } catch {
    return false
  }
}

/**
 * Downloads a CSV without keeping it: counts its lines as chunks arrive, notes the time to the
 * first byte of the body, and samples the server's RSS every 100 ms meanwhile (`samples`: the
 * lines received so far and the RSS, at each sample).
 */
export function streamCsv(base, urlPath, apiKey, serverPid) {
  return new Promise((resolve, reject) => {
    const rssBefore = rssBytes(serverPid)
    let rssPeak = rssBefore
    let newlines = 0
    const samples = []
    const sampler = setInterval(() => {
      const rss = rssBytes(serverPid)
      samples.push({ lines: newlines, rss })
      if (rss > rssPeak) rssPeak = rss
    }, 100)
    const started = performance.now()
    const request = http.get(
      new URL(urlPath, base),
      { agent, headers: { 'x-api-key': apiKey } },
      (response) => {
        const headersMs = performance.now() - started
        let firstByteMs
        let bytes = 0
        let lastByte = 0x0a
        let errorBody = ''
        response.on('data', (chunk) => {
          firstByteMs ??= performance.now() - started
          bytes += chunk.length
          if (response.statusCode !== 200) {
            errorBody += chunk
            return
          }
          for (let at = chunk.indexOf(0x0a); at !== -1; at = chunk.indexOf(0x0a, at + 1)) newlines++
          lastByte = chunk[chunk.length - 1]
        })
        response.on('end', () => {
          clearInterval(sampler)
          const rssAfter = rssBytes(serverPid)
          const lines = newlines + (lastByte === 0x0a ? 0 : 1)
          resolve({
            status: response.statusCode,
            contentType: response.headers['content-type'] ?? '',
            errorBody,
            headersMs,
            firstByteMs: firstByteMs ?? Number.NaN,
            totalMs: performance.now() - started,
            bytes,
            // The header line is not a row.
            rows: Math.max(0, lines - 1),
            rssBefore,
            rssPeak: Math.max(rssPeak, rssAfter),
            rssAfter,
            samples,
          })
        })
        response.on('error', (error) => {
          clearInterval(sampler)
          reject(error)
        })
      },
    )
    request.on('error', (error) => {
      clearInterval(sampler)
      reject(error)
    })
  })
}
