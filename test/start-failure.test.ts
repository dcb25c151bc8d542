import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import net from 'node:net'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { redisUrl } from '@visitor-id/testing/redis'
import { repoRoot } from '@visitor-id/testing/server-process'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, describe, expect, it } from 'vitest'

// A start that fails after the workers began (the listen, the last step but the admin socket)
// stops everything it started: the process that called startServer ends by itself once it has the
// rejection, with no timer, socket or handle left (test/fixtures/failed-start.mjs counts unref'd
// timers as holding it), and nothing runs against the closed store meanwhile.
const script = path.join(repoRoot, 'test/fixtures/failed-start.mjs')
const children: ChildProcess[] = []

afterAll(() => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
})

async function holdPort(): Promise<net.Server> {
  const server = net.createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  return server
}

/**
 * Runs the script on a port another server holds. Resolves with its output, when it printed the
 * rejection, and its exit: undefined when it was still running `graceMs` after the rejection.
 */
async function failedStart(env: Record<string, string>, graceMs: number) {
  const blocker = await holdPort()
  const port = (blocker.address() as net.AddressInfo).port
  const data = tempDir('vid-failed-start-')
  try {
    const child = spawn(process.execPath, [script], {
      cwd: repoRoot,
      env: {
        ...process.env,
        DATA_DIR: data.dir,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    children.push(child)
    let output = ''
    let markRejected = () => {}
    const rejected = new Promise<number>((resolve) => {
      markRejected = () => resolve(Date.now())
    })
    const collect = (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes('rejected: ')) markRejected()
    }
    child.stdout!.on('data', collect)
    child.stderr!.on('data', collect)
    // 'close': the process exited and its output is all read.
    const exit = once(child, 'close').then(([code]) => ({ code: code as number | null, at: Date.now() }))
    // The start itself (store, migrations) takes seconds; the grace runs from the rejection.
    const rejectedAt = await Promise.race([rejected, exit.then(() => undefined)])
    const ended = await Promise.race([exit, sleep(graceMs).then(() => undefined)])
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    return { port, output, rejectedAt, exit: ended }
  } finally {
    blocker.close()
    data.remove()
  }
}

/** The start was rejected for the port, and the process then ended by itself, with no pass run against the closed store. */
function expectEndedAfterRejection(result: Awaited<ReturnType<typeof failedStart>>) {
  const { port, output, rejectedAt, exit } = result
  expect(rejectedAt).toBeDefined()
  expect(output).toContain(`rejected: port ${port} is already in use: set PORT to a free port`)
  expect(exit, `still running 5 s after the rejected start; its output:\n${output}`).toBeDefined()
  expect(exit!.code).toBe(3)
  // No worker's pass ran against the closed store after the start failed.
  expect(output).not.toMatch(/failed/)
}

describe('a start that fails late', () => {
  it('leaves nothing running: the process ends by itself soon after the rejected start', async () => {
    expectEndedAfterRejection(await failedStart({}, 5_000))
  }, 90_000)

  it('with REDIS_URL, also closes the Redis connections and job workers it opened', async () => {
    const prefix = `vid-failed-start-${process.pid}-${Date.now()}`
    expectEndedAfterRejection(await failedStart({ REDIS_URL: redisUrl, REDIS_PREFIX: prefix }, 5_000))
  }, 90_000)
})
