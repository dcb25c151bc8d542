import { chmodSync, existsSync, rmSync } from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { createInterface } from 'node:readline'

// Admin commands while a server runs. The embedded store allows one process per data directory, so
// the server that owns it listens on DATA_DIR/admin.sock (mode 0600: only the machine user that
// runs the server can connect) and runs the CLI's commands with its own store and repositories.
// Protocol: one JSON line `{argv, cwd}` in; JSON lines `{out}` / `{err}` and a last `{exit}` out.

export const adminSocketName = 'admin.sock'

/** The admin socket of a data directory. */
export function adminSocketPath(dataDir: string): string {
  return path.join(dataDir, adminSocketName)
}

/** One command: the CLI's arguments and the working directory its file names are relative to. */
export interface AdminRequest {
  argv: string[]
  cwd: string
}

export type AdminReply = { out: string } | { err: string } | { exit: number }

/** Runs one request, sending its lines through `reply`; resolves to the exit code. */
export type AdminHandler = (request: AdminRequest, reply: (reply: AdminReply) => void) => Promise<number>

export interface AdminSocket {
  readonly path: string
  /** Stops accepting, waits for the commands under way, removes the socket file; idempotent. */
  close(): Promise<void>
}

const maxRequestBytes = 1_000_000

function parseRequest(line: string): AdminRequest {
  const value = JSON.parse(line) as Partial<AdminRequest>
  if (
    !Array.isArray(value.argv) ||
    !value.argv.every((arg) => typeof arg === 'string') ||
    typeof value.cwd !== 'string' ||
    !path.isAbsolute(value.cwd)
  ) {
    throw new Error('bad request')
  }
  return { argv: value.argv, cwd: value.cwd }
}

/**
 * Listens on `socketPath` with mode 0600. The caller owns the data directory (its lock), so a file
 * already there is a stale socket of a process that died (SIGKILL) and is removed first.
 * @example const admin = await listenAdminSocket(adminSocketPath(dataDir), handler)
 */
export async function listenAdminSocket(socketPath: string, handle: AdminHandler): Promise<AdminSocket> {
  const sockets = new Set<net.Socket>()
  const running = new Set<Promise<unknown>>()
  const server = net.createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => socket.destroy())
    socket.setEncoding('utf8')
    const send = (reply: AdminReply) => {
      if (!socket.destroyed) socket.write(`${JSON.stringify(reply)}\n`)
    }
    let buffer = ''
    const onData = (chunk: string) => {
      buffer += chunk
      const newline = buffer.indexOf('\n')
      if (newline < 0) {
        if (buffer.length > maxRequestBytes) socket.destroy()
        return
      }
      socket.off('data', onData)
      let request: AdminRequest
      try {
        request = parseRequest(buffer.slice(0, newline))
      } catch {
        send({ err: 'visitor-id: bad admin request' })
        send({ exit: 2 })
        socket.end()
        return
      }
      const task = handle(request, send)
        .catch(() => 1)
        .then((exit) => {
          send({ exit })
          socket.end()
        })
      running.add(task)
      void task.finally(() => running.delete(task))
    }
    socket.on('data', onData)
  })
  rmSync(socketPath, { force: true })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    // The socket file is created inside listen(): under this umask it is 0600 from the start.
    const umask = process.umask(0o177)
    try {
      server.listen(socketPath, () => {
        server.off('error', reject)
        resolve()
      })
    } finally {
      process.umask(umask)
    }
  })
  chmodSync(socketPath, 0o600)
  let closing: Promise<void> | undefined
  return {
    path: socketPath,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()))
        await Promise.allSettled([...running])
        for (const socket of sockets) socket.destroy()
        await closed
        rmSync(socketPath, { force: true })
      })()
      return closing
    },
  }
}

/** Connects, or undefined when nobody answers there (no file, a stale file, not ours to reach). */
function connect(socketPath: string): Promise<net.Socket | undefined> {
  return new Promise((resolve) => {
    const socket = net.createConnection(socketPath)
    const onError = () => {
      socket.destroy()
      resolve(undefined)
    }
    socket.once('error', onError)
    socket.once('connect', () => {
      socket.off('error', onError)
      resolve(socket)
    })
  })
}

/**
 * Sends one command to the server listening on `socketPath` and relays its lines. Resolves to the
 * command's exit code, or undefined when no server answers (the caller then opens the store itself).
 */
export async function sendAdminCommand(
  socketPath: string,
  request: AdminRequest,
  io: { out: (line: string) => void; err: (line: string) => void },
): Promise<number | undefined> {
  if (!existsSync(socketPath)) return undefined
  const socket = await connect(socketPath)
  if (!socket) return undefined
  let exit: number | undefined
  socket.on('error', () => {})
  const lines = createInterface({ input: socket, crlfDelay: Number.POSITIVE_INFINITY })
  socket.write(`${JSON.stringify(request)}\n`)
  for await (const line of lines) {
    if (!line) continue
    const reply = JSON.parse(line) as Partial<{ out: string; err: string; exit: number }>
    if (typeof reply.out === 'string') io.out(reply.out)
    else if (typeof reply.err === 'string') io.err(reply.err)
    else if (typeof reply.exit === 'number') exit = reply.exit
  }
  if (exit === undefined) {
    io.err('visitor-id: the server stopped before the command finished; run it again')
    return 1
  }
  return exit
}
