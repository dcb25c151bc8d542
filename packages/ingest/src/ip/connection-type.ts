// Connection type, hosting and anonymity of a network, from its ASN: first the curated file
// (data/asn-classification.json, documented in README.md), then rules on the organisation name.
// Names are a weaker signal, so the rules are ordered from the most to the least telling.
import { readFileSync } from 'node:fs'

export const connectionTypes = ['isp', 'mobile', 'hosting', 'business', 'education', 'government'] as const
export type ConnectionType = (typeof connectionTypes)[number]

export interface NetworkClass {
  connectionType: ConnectionType
  isHosting: boolean
  isAnonymous: boolean
}

/** The curated file's shape: ASN -> note, grouped by type, plus ASNs whose traffic is mostly anonymous. */
export interface AsnClassificationFile {
  types?: Partial<Record<ConnectionType, Record<string, string>>>
  anonymous?: Record<string, string>
}

const nameRules: [RegExp, ConnectionType, boolean?][] = [
  [/\b(vpn|proxy|proxies|anonymi[sz]|tor exit)/i, 'hosting', true],
  [
    /host|cloud|data ?cent(er|re)|server|\bvps\b|colo(cation)?\b|dedicated|\bcdn\b|compute|virtual/i,
    'hosting',
  ],
  [
    /universit|college|school|academ|education|research|institute of technology|polytechnic|\bedu\b|campus/i,
    'education',
  ],
  [
    /government|ministry|federal|\bstate of\b|county|municipal|city of|department of|parliament/i,
    'government',
  ],
  [/mobile|wireless|cellular|\bgsm\b|\blte\b|\b[345]g\b/i, 'mobile'],
  [
    /tele[ck]om|telecomunica|broadband|cable|communications|fib(er|re)|internet|\bisp\b|\bnet\b|network|telco|\bdsl\b|wifi|telephone|\btel\b|online|provider/i,
    'isp',
  ],
  // A company that runs its own network: a legal-form suffix and none of the above.
  [
    /\b(inc|llc|ltd|limited|gmbh|corp|corporation|company|plc|ag|s\.?a|b\.?v|srl|oy|ab|k\.?k|pty)\b\.?/i,
    'business',
  ],
]

/** Classifies one organisation name (used when its ASN is not in the curated file). */
export function classifyByName(organization: string): NetworkClass {
  for (const [pattern, connectionType, anonymous] of nameRules) {
    if (pattern.test(organization)) {
      return { connectionType, isHosting: connectionType === 'hosting', isAnonymous: anonymous === true }
    }
  }
  // Unknown and unnamed networks are most often small access providers.
  return { connectionType: 'isp', isHosting: false, isAnonymous: false }
}

/** Reads the curated classification shipped with ingest. */
export function readCuratedClassification(): AsnClassificationFile {
  return JSON.parse(readFileSync(new URL('../../data/asn-classification.json', import.meta.url), 'utf8'))
}

export interface AsnClassifier {
  classify(asn: number, organization: string): NetworkClass
}

/**
 * Builds the classifier from the curated file and optional overrides (same shape, later wins).
 * @example createAsnClassifier([readCuratedClassification()]).classify(15169, 'Google LLC').connectionType // 'hosting'
 */
export function createAsnClassifier(files: AsnClassificationFile[]): AsnClassifier {
  const byAsn = new Map<number, ConnectionType>()
  const anonymous = new Set<number>()
  for (const file of files) {
    for (const [type, entries] of Object.entries(file.types ?? {})) {
      if (!connectionTypes.includes(type as ConnectionType))
        throw new Error(`Unknown connection type "${type}"`)
      for (const asn of Object.keys(entries ?? {})) byAsn.set(Number(asn), type as ConnectionType)
    }
    for (const asn of Object.keys(file.anonymous ?? {})) anonymous.add(Number(asn))
  }
  // Classes are few and networks many: one object per ASN, computed once.
  const cache = new Map<number, NetworkClass>()
  return {
    classify(asn, organization) {
      const cached = cache.get(asn)
      if (cached) return cached
      const curated = byAsn.get(asn)
      const result: NetworkClass = curated
        ? { connectionType: curated, isHosting: curated === 'hosting', isAnonymous: false }
        : classifyByName(organization)
      if (anonymous.has(asn)) result.isAnonymous = true
      if (cache.size < 200_000) cache.set(asn, result)
      return result
    },
  }
}
