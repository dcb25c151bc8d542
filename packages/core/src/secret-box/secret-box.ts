// Secrets at rest (docs/decisions.md, "Integrations"): the OAuth tokens of integrations are stored sealed
// with AES-256-GCM under a key derived from SECRET_KEY (HKDF-SHA256), one random 96-bit IV per
// value; the authentication tag makes a changed or swapped value fail to open rather than decrypt to
// garbage. The associated data binds a value to where it is stored (organization and type), so a
// token copied to another organization's row does not open there either.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'

const version = 'v1'

export interface SecretBox {
  seal(plain: string, context: string): string
  /** Throws when the value was changed, sealed for another context or with another SECRET_KEY. */
  open(sealed: string, context: string): string
}

/** @example const box = secretBox(config.integrations.secretKey); box.open(box.seal(token, id), id) */
export function secretBox(secretKey: string): SecretBox {
  const key = Buffer.from(hkdfSync('sha256', secretKey, 'visitor-id', 'integration tokens v1', 32))
  return {
    seal(plain, context) {
      const iv = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', key, iv)
      cipher.setAAD(Buffer.from(context))
      const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
      return [version, iv, cipher.getAuthTag(), sealed]
        .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
        .join('.')
    },
    open(sealed, context) {
      const [tag, iv, authTag, data] = sealed.split('.')
      if (tag !== version || !iv || !authTag || data === undefined) throw new Error('not a sealed value')
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'))
      decipher.setAAD(Buffer.from(context))
      decipher.setAuthTag(Buffer.from(authTag, 'base64url'))
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString(
        'utf8',
      )
    },
  }
}
