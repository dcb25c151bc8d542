// The built server as a child process of the benchmark: started on a data directory, ready once it
// prints "running at", stopped with SIGTERM (the data directory is locked while it runs).
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import path from 'node:path'

const root = path.resolve(import.meta.dirname, '..', '..')
// The `visitor-id` command as installed (it sizes libuv's thread pool, then loads dist/main.js).
const mainScript = path.join(root, 'packages/server/bin/visitor-id.cjs')

/**
 * Starts `visitor-id serve [args]` on `dataDir` and resolves once it listens.
 * @example const server = await startServer(dir, ['--role', 'api']); ...; await server.stop()
 */
export async function startServer(dataDir, args = [], env = {}) {
  const child = spawn(process.execPath, [mainScript, 'serve', ...args], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const collect = (chunk) => {
    output += chunk
  }
  child.stdout.on('data', collect)
  child.stderr.on('data', collect)
  const exited = once(child, 'exit')
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the server did not start in 120 s:\n${output}`)),
      120_000,
    )
    child.stdout.on('data', () => {
      const match = /running at (http:\/\/\S+)/.exec(output)
      if (match) {
        clearTimeout(timer)
        resolve(match[1])
      }
    })
    exited.then(([code]) => {
      clearTimeout(timer)
      reject(new Error(`the server exited with ${code}:\n${output}`))
    })
  })
  return {
    url,
    pid: child.pid,
    output: () => output,
    /** SIGTERM, then the exit (SIGKILL after 60 s); the data directory is free afterwards. */
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
      await exited
      clearTimeout(timer)
    },
  }
}

/**
 * Starts the server once on an empty data directory so it writes its bootstrap organization and
 * keys, stops it, and returns DATA_DIR/bootstrap.json.
 */
export async function bootstrapDataDir(dataDir) {
  const server = await startServer(dataDir)
  try {
    return JSON.parse(readFileSync(path.join(dataDir, 'bootstrap.json'), 'utf8'))
  } finally {
    await server.stop()
  }
}

/** A process's resident set size in bytes (VmRSS), or NaN off Linux. */
export function rssBytes(pid) {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match ? Number(match[1]) * 1024 : Number.NaN
  } catch {
    return Number.NaN
  }
}
