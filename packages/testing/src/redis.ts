import net from 'node:net'

export const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'

/** Whether something answers at REDIS_URL (a TCP connect within a second). */
export async function redisAnswers(): Promise<boolean> {
  const url = new URL(redisUrl)
  return new Promise((resolve) => {
    const socket = net.connect({ host: url.hostname, port: Number(url.port || 6379) })
    socket.setTimeout(1000)
    socket.once('connect', () => {
      socket.end()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
    socket.once('timeout', () => {
      socket.destroy()
      resolve(false)
    })
  })
}
