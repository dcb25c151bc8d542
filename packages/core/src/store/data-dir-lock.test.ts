import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { describe, expect, it } from 'vitest'
import { DataDirLockedError, lockDataDir } from './data-dir-lock.js'

describe('lockDataDir', () => {
  it('claims a directory and releases it', () => {
    const tmp = tempDir()
    const lock = lockDataDir(tmp.dir)
    expect(readFileSync(lock.file, 'utf8')).toBe(String(process.pid))
    lock.release()
    expect(existsSync(lock.file)).toBe(false)
    tmp.remove()
  })

  it('refuses while a live process owns it', async () => {
    const tmp = tempDir()
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'])
    writeFileSync(path.join(tmp.dir, '.lock'), String(child.pid))
    try {
      expect(() => lockDataDir(tmp.dir)).toThrow(DataDirLockedError)
      expect(() => lockDataDir(tmp.dir)).toThrow(`pid ${child.pid}`)
    } finally {
      child.kill('SIGKILL')
      await once(child, 'exit')
    }
    // The owner is gone (as after kill -9): the stale lock is taken over.
    const lock = lockDataDir(tmp.dir)
    expect(readFileSync(lock.file, 'utf8')).toBe(String(process.pid))
    lock.release()
    tmp.remove()
  })
})
