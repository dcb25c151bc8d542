import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'

/** A new random UUID (organizations, users, visitors, sessions, keys). */
export function newId(): string {
  return randomUUID()
}

/** `prefix` + `bytes` random bytes as lowercase hex, e.g. `randomToken('bsk_live_', 16)`. */
export function randomToken(prefix: string, bytes: number): string {
  return prefix + randomBytes(bytes).toString('hex')
}

/** Lowercase hex SHA-256: how keys and secrets are stored. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex')
}

/** Constant-time string equality (for digests, signatures and tokens). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  if (left.length !== right.length) {
    // Compare anyway so the time taken does not tell where the lengths differ.
    timingSafeEqual(left, left)
    return false
  }
  return timingSafeEqual(left, right)
}

let lastVersion = 0n

/**
 * A strictly increasing row version for ReplacingMergeTree: microseconds since the epoch,
 * bumped when two writes land in the same microsecond, so a later write always wins.
 */
export function nextVersion(): string {
  const now = BigInt(Date.now()) * 1000n
  lastVersion = now > lastVersion ? now : lastVersion + 1n
  return lastVersion.toString()
}
