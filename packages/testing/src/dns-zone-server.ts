// A real DNS server for tests (dns2's UDP server on 127.0.0.1, a free port) answering CNAME, A
// and AAAA questions from a small zone the test writes (and may change while it runs).
import dns2 from 'dns2'

const { Packet } = dns2

/** Per name: its records, or 'silent' (never answered). Names absent from the zone are NXDOMAIN. */
export type Zone = Record<string, { CNAME?: string; A?: string[]; AAAA?: string[] } | 'silent'>

/**
 * A DNS server answering from `zone` (which the test may change): CNAME, A and AAAA; an A or AAAA
 * question on a CNAME name is answered with the CNAME and the target's records, as a recursive
 * resolver does; a type the name has no record of gets an empty answer (NODATA).
 */
export async function startZoneServer(zone: Zone) {
  const server = dns2.createServer({
    udp: { type: 'udp4' },
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request)
      const question = request.questions[0]
      const asked = (question?.name ?? '').toLowerCase().replace(/\.$/, '')
      const resource = (name: string, fields: Record<string, unknown>) =>
        new Packet.Resource({ name, class: Packet.CLASS.IN, ttl: 60, ...fields })
      let name = asked
      for (let hops = 0; hops < 8; hops++) {
        const entry = zone[name]
        if (entry === 'silent') return
        if (entry === undefined) {
          if (name === asked) response.header.rcode = 3 // NXDOMAIN
          break
        }
        if (entry.CNAME) {
          response.answers.push(resource(name, { type: Packet.TYPE.CNAME, domain: entry.CNAME }))
          if (question?.type === Packet.TYPE.CNAME) break
          name = entry.CNAME
          continue
        }
        if (question?.type === Packet.TYPE.A) {
          for (const address of entry.A ?? [])
            response.answers.push(resource(name, { type: Packet.TYPE.A, address }))
        }
        if (question?.type === Packet.TYPE.AAAA) {
          for (const address of entry.AAAA ?? [])
            response.answers.push(resource(name, { type: Packet.TYPE.AAAA, address }))
        }
        break
      }
      send(response)
    },
  })
  const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } })
  return { address: `127.0.0.1:${addresses.udp!.port}`, close: () => server.close() }
}
