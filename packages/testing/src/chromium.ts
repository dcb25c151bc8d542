import { execFileSync } from 'node:child_process'
import {
  accessSync,
  constants,
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import { brotliDecompressSync, createBrotliDecompress } from 'node:zlib'
import { type Browser, chromium } from 'playwright-core'

/** A Chromium to drive, and where it was found. */
export interface FoundChromium {
  executablePath: string
  source: 'CHROMIUM_PATH' | 'system' | '@sparticuz/chromium'
  /** Extra environment for the browser process (the bundled build's own libraries and fonts). */
  env: Record<string, string>
}

/** Executable names of a system Chromium or Chrome, looked up on PATH in this order. */
export const systemChromiumNames = [
  'chromium',
  'chromium-browser',
  'google-chrome',
  'google-chrome-stable',
  'chrome',
]
const macApps = [
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
]

/**
 * Flags for a test browser on a server: no sandbox (CI runs as root, and the pages are our own),
 * no GPU, and none of the background traffic to Google a first run starts.
 */
export const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

const isExecutable = (file: string) => {
  try {
    accessSync(file, constants.X_OK)
    return statSync(file).isFile()
  } catch {
    return false
  }
}

/**
 * Finds a Chromium: `CHROMIUM_PATH`, else a system Chromium or Chrome on PATH (or in
 * /Applications on macOS), else the build that ships in the `@sparticuz/chromium` dev dependency
 * (Linux x64 only), unpacked once per install into node_modules/.cache.
 * @example const browser = await launchChromium(await findChromium())
 */
export async function findChromium(env: NodeJS.ProcessEnv = process.env): Promise<FoundChromium> {
  if (env.CHROMIUM_PATH) {
    if (!isExecutable(env.CHROMIUM_PATH))
      throw new Error(`CHROMIUM_PATH is ${env.CHROMIUM_PATH}, which is not an executable file`)
    return { executablePath: env.CHROMIUM_PATH, source: 'CHROMIUM_PATH', env: {} }
  }
  const onPath = (env.PATH ?? '').split(path.delimiter).filter(Boolean)
  const candidates = [
    ...systemChromiumNames.flatMap((name) => onPath.map((dir) => path.join(dir, name))),
    ...(process.platform === 'darwin' ? macApps : []),
  ]
  const system = candidates.find(isExecutable)
  if (system) return { executablePath: system, source: 'system', env: {} }
  return unpackBundledChromium()
}

/** Launches a headless browser found by {@link findChromium}. */
export async function launchChromium(found: FoundChromium): Promise<Browser> {
  return chromium.launch({
    executablePath: found.executablePath,
    headless: true,
    args: chromiumArgs,
    env: { ...process.env, ...found.env },
  })
}

/**
 * Closes the browser, waiting at most `limitMs`: under a loaded machine a close has been seen to
 * hang past a test hook's minute. Playwright kills the browser process when the test process ends.
 */
export async function closeChromium(browser: Browser | undefined, limitMs = 15_000): Promise<void> {
  if (!browser) return
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), limitMs)
  })
  const outcome = await Promise.race([browser.close().then(() => 'closed' as const), late])
  clearTimeout(timer)
  if (outcome === 'late') console.warn(`chromium: close took over ${limitMs} ms; left to the process exit`)
}

/**
 * Unpacks the brotli-compressed Chromium of `@sparticuz/chromium` with the libraries it links
 * (NSS, expat) and a font, so it runs on a bare Linux x64. Its own `executablePath()` unpacks to a
 * fixed /tmp/chromium and reuses whatever is there; this unpacks into a directory named for the
 * version, renamed into place when complete, so parallel test files and upgrades never see a
 * partial or stale binary. Its `args` are for AWS Lambda (`--single-process`,
 * `--disable-web-security`...) and would change what the pixel tests check: they are not used.
 */
async function unpackBundledChromium(): Promise<FoundChromium> {
  const hint =
    'set CHROMIUM_PATH to a Chromium or Chrome executable, or install one (e.g. apt-get install chromium)'
  if (process.platform !== 'linux' || process.arch !== 'x64')
    throw new Error(
      `no Chromium found: ${hint}; the bundled @sparticuz/chromium runs on Linux x64 only, not ${process.platform} ${process.arch}`,
    )
  let root: string
  try {
    root = path.dirname(createRequire(import.meta.url).resolve('@sparticuz/chromium'))
    while (!existsSync(path.join(root, 'bin', 'chromium.br'))) {
      if (path.dirname(root) === root) throw new Error('no bin/chromium.br')
      root = path.dirname(root)
    }
  } catch {
    throw new Error(`no Chromium found: run npm ci (it installs @sparticuz/chromium), or ${hint}`)
  }
  const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }
  const dir = path.join(root, '..', '..', '.cache', `sparticuz-chromium-${version}`)
  const found: FoundChromium = {
    executablePath: path.join(dir, 'chromium'),
    source: '@sparticuz/chromium',
    env: { LD_LIBRARY_PATH: path.join(dir, 'lib'), FONTCONFIG_FILE: path.join(dir, 'fonts.conf') },
  }
  if (existsSync(found.executablePath)) return found

  const bin = path.join(root, 'bin')
  const staging = `${dir}.${process.pid}.tmp`
  rmSync(staging, { recursive: true, force: true })
  mkdirSync(staging, { recursive: true })
  try {
    await pipeline(
      createReadStream(path.join(bin, 'chromium.br'), { highWaterMark: 2 ** 22 }),
      createBrotliDecompress({ chunkSize: 2 ** 21 }), // large chunks: about twice as fast
      createWriteStream(path.join(staging, 'chromium'), { mode: 0o755 }),
    )
    // lib/ (NSS, expat built for Amazon Linux, fine on any glibc) and fonts/ (Open Sans): without
    // a font, text has no width and Playwright finds no link visible to click.
    for (const archive of ['al2023.tar.br', 'fonts.tar.br'])
      execFileSync('tar', ['-x', '--no-same-owner', '-C', staging], {
        input: brotliDecompressSync(readFileSync(path.join(bin, archive))),
      })
    // The archive's fonts.conf points at /tmp/fonts: replaced by one naming this directory.
    const xml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;')
    writeFileSync(
      path.join(staging, 'fonts.conf'),
      `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n` +
        `  <dir>${xml(path.join(dir, 'fonts'))}</dir>\n  <cachedir>${xml(path.join(dir, 'fonts-cache'))}</cachedir>\n` +
        '</fontconfig>\n',
    )
    renameSync(staging, dir)
  } catch (error) {
    rmSync(staging, { recursive: true, force: true })
    // Another process finished first: its copy is as good as ours.
    if (!existsSync(found.executablePath)) throw error
  }
  return found
}
