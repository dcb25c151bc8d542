// Test code stays out of what ships. Every workspace is part of the service someone installs (most are
// `private` only so that they are never published to npm by mistake), except @visitor-id/testing, the
// helpers of this repository's tests. `npm pack --dry-run` lists what a package's tarball holds (its
// `files`, from the build in dist/): none of it may be a test or a test helper. Needs `npm run build`.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const repoRoot = path.resolve(import.meta.dirname, '..')
const testingPackage = '@visitor-id/testing'

interface Manifest {
  name: string
  private?: boolean
  dependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
}

const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T
const workspaces = readJson<{ workspaces: string[] }>(path.join(repoRoot, 'package.json')).workspaces.map(
  (dir) => ({ dir, manifest: readJson<Manifest>(path.join(repoRoot, dir, 'package.json')) }),
)
const shipped = workspaces.filter(({ manifest }) => manifest.name !== testingPackage)

/** A path a tarball must not hold: a test, a test helper, a fake or a fixture. */
const isTestCode = (file: string) =>
  file.includes('testing/') || file.includes('.test.') || file.includes('fake-') || file.includes('fixtures')

describe('packaging', () => {
  it('the testing package is a private workspace that no shipped package depends on', () => {
    const testing = workspaces.find(({ manifest }) => manifest.name === testingPackage)
    expect(testing?.manifest.private).toBe(true)
    for (const { manifest } of shipped) {
      const runtime = {
        ...manifest.dependencies,
        ...manifest.peerDependencies,
        ...manifest.optionalDependencies,
      }
      expect(Object.keys(runtime), manifest.name).not.toContain(testingPackage)
    }
  })

  it('npm pack of every shipped package lists no test code', () => {
    const packed = JSON.parse(
      execFileSync(
        'npm',
        ['pack', '--dry-run', '--json', '--ignore-scripts', ...shipped.flatMap(({ dir }) => ['-w', dir])],
        { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
      ),
    ) as { name: string; files: { path: string }[] }[]
    expect(packed.map((tarball) => tarball.name).sort()).toEqual(
      shipped.map(({ manifest }) => manifest.name).sort(),
    )
    for (const tarball of packed) {
      const files = tarball.files.map((file) => file.path)
      expect(files.length, tarball.name).toBeGreaterThan(0)
      // (A dist/testing/ left by a build from before the helpers moved: delete dist and rebuild.)
      expect(files.filter(isTestCode), tarball.name).toEqual([])
    }
  })
})
