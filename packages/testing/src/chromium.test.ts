import { execFileSync } from 'node:child_process'
import { chmodSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { findChromium, launchChromium } from './chromium.js'
import { tempDir } from './temp-dir.js'

// Which browser the browser tests drive: CHROMIUM_PATH, else a system one, else the bundled one.
const dirs: { remove: () => void }[] = []
/** A directory holding fake executables with these names. */
const binDir = (...names: string[]) => {
  const bin = tempDir('vid-chromium-')
  dirs.push(bin)
  for (const name of names) {
    writeFileSync(path.join(bin.dir, name), '#!/bin/sh\n')
    chmodSync(path.join(bin.dir, name), 0o755)
  }
  return bin.dir
}

describe('findChromium', () => {
  afterAll(() => {
    for (const dir of dirs) dir.remove()
  })

  it('takes CHROMIUM_PATH first, and refuses one that is not an executable', async () => {
    const dir = binDir('my-chrome', 'chromium')
    expect(await findChromium({ CHROMIUM_PATH: path.join(dir, 'my-chrome'), PATH: dir })).toEqual({
      executablePath: path.join(dir, 'my-chrome'),
      source: 'CHROMIUM_PATH',
      env: {},
    })
    await expect(findChromium({ CHROMIUM_PATH: path.join(dir, 'missing'), PATH: dir })).rejects.toThrow(
      /CHROMIUM_PATH is .*missing, which is not an executable file/,
    )
  })

  it('then a system Chromium or Chrome on PATH', async () => {
    const chrome = binDir('google-chrome')
    expect(await findChromium({ PATH: ['/nonexistent', chrome].join(path.delimiter) })).toEqual({
      executablePath: path.join(chrome, 'google-chrome'),
      source: 'system',
      env: {},
    })
    // chromium is looked for first, in every PATH directory
    const both = [chrome, binDir('chromium')].join(path.delimiter)
    expect((await findChromium({ PATH: both })).executablePath).toMatch(/\/chromium$/)
  })

  it('else the Chromium of @sparticuz/chromium, which runs on a machine with none installed', {
    timeout: 60_000,
  }, async () => {
    if (process.platform !== 'linux' || process.arch !== 'x64') {
      await expect(findChromium({ PATH: '' })).rejects.toThrow(/set CHROMIUM_PATH.*Linux x64 only/)
      return
    }
    const found = await findChromium({ PATH: '' })
    expect(found.source).toBe('@sparticuz/chromium')
    expect(
      execFileSync(found.executablePath, ['--version'], { env: { ...process.env, ...found.env } }).toString(),
    ).toMatch(/^Chromium \d+\./)
    const browser = await launchChromium(found)
    try {
      const page = await browser.newPage()
      await page.setContent('<a id="go" href="#next">next</a>')
      await page.click('#go') // needs a font: a link with no text width is not clickable
      expect(await page.evaluate(() => location.hash)).toBe('#next')
    } finally {
      await browser.close()
    }
  })
})
