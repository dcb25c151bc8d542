// A real DNS server for tests (dns2's UDP server on 127.0.0.1, a free port) that answers PTR
// queries for the addresses it is given and records every question it gets.
import dns2 from 'dns2'

const { Packet } = dns2

/** Per address: its PTR names, `nxdomain`, or `silent` (the server never answers). */
export type PtrRecords = Record<string, string[] | 'nxdomain' | 'silent'>

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, for DNS_SERVERS. */
  address: string
  /** Every question name received, in order. */
  readonly questions: string[]
  /** How many times the PTR name of this address was asked. */
  asked(ip: string): number
  close(): Promise<void>
}

/** The 32 hex digits of an IPv6 address, written independently of the code under test. */
function expandIPv6(ip: string): string {
  const [head = '', tail] = ip.split('::')
  const left = head ? head.split(':') : []
  const right = tail ? tail.split(':') : []
  const middle = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0')
  return [...left, ...middle, ...right].map((group) => group.padStart(4, '0')).join('')
}

/** The reverse-zone name of an address. */
export function arpaName(ip: string): string {
  if (ip.includes(':')) return `${[...expandIPv6(ip)].reverse().join('.')}.ip6.arpa`
  return `${ip.split('.').reverse().join('.')}.in-addr.arpa`
}

/**
 * Starts the server.
 * @example const dns = await startDnsServer({ '203.0.113.7': ['vpn.acme.co.uk'] }); loadConfig({ DNS_SERVERS: dns.address })
 */
export async function startDnsServer(records: PtrRecords): Promise<TestDnsServer> {
  const byName = new Map(Object.entries(records).map(([ip, answer]) => [arpaName(ip), answer]))
  const questions: string[] = []
  const server = dns2.createServer({
    udp: { type: 'udp4' },
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request)
      const question = request.questions[0]
      const name = question?.name.toLowerCase() ?? ''
      questions.push(name)
      const answer = byName.get(name)
      if (answer === 'silent') return
      if (answer === undefined || answer === 'nxdomain') {
        response.header.rcode = 3 // NXDOMAIN
      } else if (question?.type === Packet.TYPE.PTR) {
        for (const domain of answer) {
          response.answers.push(
            new Packet.Resource({ name, type: Packet.TYPE.PTR, class: Packet.CLASS.IN, ttl: 300, domain }),
          )
        }
      }
      send(response)
    },
  })
  const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } })
  const port = addresses.udp!.port
  return {
    address: `127.0.0.1:${port}`,
    questions,
    asked: (ip) => questions.filter((name) => name === arpaName(ip)).length,
    close: async () => {
      await server.close()
    },
  }
}
