import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import net from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { killServerProcess, repoRoot, runCli, startServerProcess } from '@visitor-id/testing/server-process'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, describe, expect, it } from 'vitest'
import { eventually } from './fixtures/hits.js'

// `npm start` stopped the way a process supervisor stops it: one signal to npm's pid, nothing to
// the server behind it. npm forwards SIGTERM and SIGINT to its script's process, so the script
// must be the server itself (`exec node ...`), not a shell that would die and leave it running.
// The tree is already built (`npm test` builds first): `--ignore-scripts` skips the `prestart`
// build and runs the very same `start` script, without rewriting dist/ under the other tests.
const data = tempDir('vid-npm-start-')
const started: { npm: ChildProcess; serverPid?: number }[] = []

afterAll(async () => {
  for (const { npm, serverPid } of started) {
    if (serverPid && alive(serverPid)) process.kill(serverPid, 'SIGKILL')
    if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL')
  }
  data.remove()
})

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as net.AddressInfo
  server.close()
  await once(server, 'close')
  return port
}

async function portIsFree(port: number): Promise<boolean> {
  const server = net.createServer().listen(port, '127.0.0.1')
  try {
    await once(server, 'listening')
    server.close()
    await once(server, 'close')
    return true
  } catch {
    return false
  }
}

/** Runs `npm start` (in a process group of its own when `detached`) until /readyz answers 200. */
async function npmStart(options: { detached?: boolean } = {}) {
  const port = await freePort()
  const npm = spawn('npm', ['start', '--ignore-scripts'], {
    cwd: repoRoot,
    env: { ...process.env, DATA_DIR: data.dir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  })
  const entry: { npm: ChildProcess; serverPid?: number } = { npm }
  started.push(entry)
  let output = ''
  npm.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  npm.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  const exit = once(npm, 'exit').then(([code, signal]) => ({ code, signal }))
  const deadline = Date.now() + 60_000
  for (;;) {
    if (npm.exitCode !== null) throw new Error(`npm start exited with ${npm.exitCode}:\n${output}`)
    if (Date.now() > deadline) throw new Error(`npm start not ready in 60 s:\n${output}`)
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined)
    if (ready?.status === 200) break
    await sleep(100)
  }
  // The server's pid, from its own "ready" log line.
  const pid = Number(/"pid":(\d+)[^\n]*"msg":"ready"/.exec(output)?.[1])
  expect(pid).toBeGreaterThan(0)
  expect(pid).not.toBe(npm.pid)
  entry.serverPid = pid
  return { npm, port, pid, exit, output: () => output }
}

/** Sends the signal, then expects npm to exit 0 within 10 s with the server gone and the port free. */
async function expectCleanStop(run: Awaited<ReturnType<typeof npmStart>>, send: () => void): Promise<number> {
  const sent = Date.now()
  send()
  const result = await Promise.race([run.exit, sleep(10_000).then(() => 'still running after 10 s')])
  const stopMs = Date.now() - sent
  expect(result, run.output()).toEqual({ code: 0, signal: null })
  expect(alive(run.pid)).toBe(false)
  expect(await portIsFree(run.port)).toBe(true)
  expect(run.output()).toMatch(/"msg":"shutting down"/)
  expect(run.output()).not.toMatch(/second signal/)
  return stopMs
}

describe('serve: start-up errors a person can fix', () => {
  it('a port already taken prints one line naming PORT, and leaves the data directory free', {
    timeout: 60_000,
  }, async () => {
    const taken = net.createServer().listen(0, '127.0.0.1')
    await once(taken, 'listening')
    const { port } = taken.address() as net.AddressInfo
    try {
      const run = await runCli(['serve'], { DATA_DIR: data.dir, PORT: String(port), HOST: '127.0.0.1' })
      expect(run.code).toBe(1)
      expect(run.stderr).toBe(`visitor-id: port ${port} is already in use: set PORT to a free port\n`)
      expect(run.stdout).not.toMatch(/\n\s+at /)
    } finally {
      taken.close()
    }
  })

  it('a HOST that is not an address of this machine prints one line naming HOST', {
    timeout: 60_000,
  }, async () => {
    const run = await runCli(['serve'], { DATA_DIR: data.dir, PORT: '0', HOST: '192.0.2.1' })
    expect(run.code).toBe(1)
    expect(run.stderr).toBe(
      'visitor-id: HOST 192.0.2.1 is not an address of this machine: set HOST (e.g. 0.0.0.0)\n',
    )
  })
})

describe('npm start stops cleanly on a signal to npm only', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s to npm: npm exits 0 within 10 s, nothing left running',
    {
      timeout: 90_000,
    },
    async (signal) => {
      const run = await npmStart()
      const stopMs = await expectCleanStop(run, () => run.npm.kill(signal))
      console.log(`npm start, ${signal} to npm: stopped in ${stopMs} ms`)
    },
  )

  it('Ctrl-C in a terminal (SIGINT to npm and the server at once) is one graceful stop', {
    timeout: 90_000,
  }, async () => {
    const run = await npmStart({ detached: true })
    // The terminal signals the whole foreground process group; npm forwards its copy as well.
    await expectCleanStop(run, () => process.kill(-run.npm.pid!, 'SIGINT'))
    expect(run.output().match(/"msg":"shutting down"/g)).toHaveLength(1)
  })
})

describe('serve: a second signal while the stop waits', () => {
  /** A server whose graceful stop waits (for a request whose body never comes), stopping. */
  async function stoppingServer() {
    const server = await startServerProcess({ DATA_DIR: data.dir, LOG_LEVEL: 'info' })
    const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1')
    await once(socket, 'connect')
    socket.write(
      'POST /collect HTTP/1.1\r\nhost: x\r\ncontent-type: text/plain\r\ncontent-length: 100\r\n\r\n',
    )
    await sleep(200)
    server.child.kill('SIGTERM')
    await eventually(async () => (server.output().includes('"msg":"shutting down"') ? true : undefined))
    return { server, socket, firstAt: Date.now() }
  }

  it('the same signal within a second is the same request; later, it exits at once with 130', {
    timeout: 60_000,
  }, async () => {
    const { server, socket, firstAt } = await stoppingServer()
    try {
      server.child.kill('SIGTERM') // the copy npm forwards after the terminal's
      await sleep(500)
      expect(server.child.exitCode, server.output()).toBeNull()
      await sleep(Math.max(0, firstAt + 1100 - Date.now()))
      const sent = Date.now()
      server.child.kill('SIGTERM')
      expect(await server.exit, server.output()).toEqual({ code: 130, signal: null })
      expect(Date.now() - sent).toBeLessThan(2000)
      expect(server.output()).toMatch(/second signal: exiting now/)
    } finally {
      socket.destroy()
      await killServerProcess(server)
    }
  })

  it('another signal exits at once with 130', { timeout: 60_000 }, async () => {
    const { server, socket } = await stoppingServer()
    try {
      server.child.kill('SIGINT')
      expect(await server.exit, server.output()).toEqual({ code: 130, signal: null })
    } finally {
      socket.destroy()
      await killServerProcess(server)
    }
  })
})
