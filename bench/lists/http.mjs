// HTTP side of the lists benchmark: JSON requests one at a time over a keep-alive connection, timed
// to the last byte of the body, and the audience export read as a stream and counted line by line,
// with its headers and the server's RSS sampled every 100 ms.
import http from 'node:http'
import { rssBytes } from '../analytics/server.mjs'

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })

/**
 * `method urlPath` with the API key and `body` as JSON (if any); resolves with the status, the
 * headers, the body (parsed when JSON) and the milliseconds to its last byte.
 */
export function timedRequest(base, method, urlPath, apiKey, body) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body))
    const headers = { 'x-api-key': apiKey }
    if (payload) {
      headers['content-type'] = 'application/json'
      headers['content-length'] = String(payload.length)
    }
    const started = performance.now()
    const request = http.request(new URL(urlPath, base), { method, agent, headers }, (response) => {
      const chunks = []
      response.on('data', (chunk) => chunks.push(chunk))
      response.on('end', () => {
        const ms = performance.now() - started
        const text = Buffer.concat(chunks).toString('utf8')
        let json
        try {
          json = JSON.parse(text)
        } catch {}
        resolve({ status: response.statusCode, headers: response.headers, text, json, ms })
      })
      response.on('error', reject)
    })
    request.on('error', reject)
    request.end(payload)
  })
}

/**
 * Downloads a CSV without keeping it: counts its lines as chunks arrive, keeps its first line and
 * the first data line (to check their form), notes the time to the headers and to the first byte
 * of the body, and samples the server's RSS every 100 ms meanwhile (with the time of each sample).
 */
export function streamExport(base, urlPath, apiKey, serverPid) {
  return new Promise((resolve, reject) => {
    const rssBefore = rssBytes(serverPid)
    const started = performance.now()
    const samples = [{ ms: 0, rss: rssBefore }]
    const sampler = setInterval(() => {
      samples.push({ ms: performance.now() - started, rss: rssBytes(serverPid) })
    }, 100)
    const fail = (error) => {
      clearInterval(sampler)
      reject(error)
    }
    const request = http.get(
      new URL(urlPath, base),
      { agent, headers: { 'x-api-key': apiKey } },
      (response) => {
        const headersMs = performance.now() - started
        let firstByteMs
        let newlines = 0
        let bytes = 0
        let lastByte = 0x0a
        let head = ''
        let errorBody = ''
        response.on('data', (chunk) => {
          firstByteMs ??= performance.now() - started
          bytes += chunk.length
          if (response.statusCode !== 200) {
            errorBody += chunk
            return
          }
          if (head.length < 200) head += chunk.subarray(0, 200).toString('utf8')
          for (let at = chunk.indexOf(0x0a); at !== -1; at = chunk.indexOf(0x0a, at + 1)) newlines++
          lastByte = chunk[chunk.length - 1]
        })
        response.on('end', () => {
          clearInterval(sampler)
          const totalMs = performance.now() - started
          const rssAfter = rssBytes(serverPid)
          samples.push({ ms: totalMs, rss: rssAfter })
          const lines = newlines + (lastByte === 0x0a || bytes === 0 ? 0 : 1)
          const [headerLine = '', firstRow = ''] = head.split(/\r?\n/)
          resolve({
            status: response.statusCode,
            headers: response.headers,
            errorBody,
            headersMs,
            firstByteMs: firstByteMs ?? Number.NaN,
            totalMs,
            bytes,
            headerLine,
            firstRow,
            // The header line is not a row.
            rows: Math.max(0, lines - 1),
            rssBefore,
            rssAfter,
            rssPeak: Math.max(...samples.map((s) => s.rss).filter(Number.isFinite)),
            samples,
          })
        })
        response.on('error', fail)
      },
    )
    request.on('error', fail)
  })
}
