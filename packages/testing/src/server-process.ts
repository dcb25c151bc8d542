import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import path from 'node:path'

export const repoRoot = path.resolve(import.meta.dirname, '..', '..', '..')
export const mainScript = path.join(repoRoot, 'packages/server/dist/main.js')

export interface ServerProcess {
  child: ChildProcess
  url: string
  output: () => string
  /** Milliseconds from spawn to the "running at" line. */
  readyAfterMs: number
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/** Starts `visitor-id serve` as a real process on a free port and waits until it says it is running. */
export async function startServerProcess(
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<ServerProcess> {
  const started = Date.now()
  const child = spawn(process.execPath, [mainScript, 'serve'], {
    cwd: repoRoot,
    // INGEST_ACK=store: see harness.ts (tests read what they sent right after its 202).
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', INGEST_ACK: 'store', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  const exit = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }))
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server not ready in ${timeoutMs} ms:\n${output}`)),
      timeoutMs,
    )
    const check = () => {
      const match = /running at (http:\/\/[^\s]+)/.exec(output)
      if (match) {
        clearTimeout(timer)
        resolve(match[1]!)
      }
    }
    child.stdout!.on('data', check)
    void exit.then(({ code }) => {
      clearTimeout(timer)
      reject(new Error(`server exited with ${code} before it was ready:\n${output}`))
    })
  })
  return { child, url, output: () => output, readyAfterMs: Date.now() - started, exit }
}

/** Teardown: kills the server with SIGKILL if it is still running, and waits for it to exit. */
export async function killServerProcess(server: ServerProcess | undefined): Promise<void> {
  if (!server || server.child.exitCode !== null) return
  server.child.kill('SIGKILL')
  await server.exit
}

/** Runs the CLI to completion. */
export async function runCli(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [mainScript, ...args], {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
  })
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const [code] = await once(child, 'exit')
  return { code: code as number | null, stdout, stderr }
}
