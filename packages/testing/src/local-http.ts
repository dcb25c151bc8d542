// Listening and closing the local HTTP servers the tests start (fake platforms, a store front):
// one way for all of them, on 127.0.0.1 and a free port.

import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** Listens on 127.0.0.1 and a free port; rejects when it cannot. Resolves with the port. */
export async function listenLocal(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  return (server.address() as AddressInfo).port
}

/**
 * Stops the server. Kept-alive connections (the clients under test pool theirs) are closed too,
 * else `close` would wait for them to time out.
 */
export function closeLocal(server: Server): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()))
    server.closeAllConnections()
  })
}
