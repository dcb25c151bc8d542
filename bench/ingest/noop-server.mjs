// The baseline of the ingest benchmark: Fastify with the same body parsing as /collect (text/plain
// JSON, 16 KB limit) and a route that answers 202 at once. Prints its URL, runs until killed.
import Fastify from 'fastify'

const app = Fastify({ logger: false, trustProxy: true })
app.removeAllContentTypeParsers()
app.addContentTypeParser(
  ['text/plain', 'application/json'],
  { parseAs: 'string' },
  (_request, body, done) => {
    try {
      done(null, JSON.parse(body))
    } catch (error) {
      done(error)
    }
  },
)
app.post('/collect', { bodyLimit: 16 * 1024 }, async (_request, reply) => reply.code(202).send())
const address = await app.listen({ port: 0, host: '127.0.0.1' })
console.log(`running at ${address}`)
