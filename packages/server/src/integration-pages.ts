// The integration pages a browser sees (docs/decisions.md, "Integrations"): the OAuth callback an ads
// platform sends the user back to, and the installer link of an integrator token. Pages, not JSON:
// a person is looking at them. The `code`, `state` and installer token in their URLs are never
// logged (the routes log at `warn` only); a refused installation is logged in the words shown.
import { escapeHtml } from '@visitor-id/core/email'
import type { EndpointDoc } from '@visitor-id/core/endpoint-doc'
import {
  completeInstall,
  type FlowDeps,
  type IntegrationType,
  integrationTypes,
  redeemIntegratorToken,
} from '@visitor-id/core/integrations'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { z } from 'zod'
import { page } from './html-page.js'

const typeParams = z.object({ type: z.enum(integrationTypes).describe('`searchAds` or `socialAds`') })
const htmlPage = (description: string) => ({ status: 200, description, contentType: 'text/html' })

export const integrationPageDocs: EndpointDoc[] = [
  {
    operationId: 'integrationOAuthCallback',
    method: 'GET',
    path: '/integrations/callback/{type}',
    tag: 'Integrations',
    summary: "The OAuth redirect URI (register it in the ads platform's app)",
    description:
      '`PUBLIC_URL/integrations/callback/searchAds` (or `socialAds`) is the redirect URI to register ' +
      'with the provider. The `state` must be one this server issued for the type (10 minutes, once); ' +
      'the code is exchanged with the PKCE verifier, the tokens stored encrypted, the ads accounts ' +
      "listed. The page says what happened, a refusal in the platform's words (an expired or used " +
      'code, a redirect URI the platform does not take); a refused or unknown authorization stores nothing.',
    params: typeParams,
    query: z.object({
      code: z.string().max(4096).optional(),
      state: z.string().max(200).optional(),
      error: z.string().max(200).optional().describe('Set by the provider when the user declined'),
    }),
    responses: [htmlPage('What happened')],
    errors: [],
    example: {
      params: { type: 'searchAds' },
      query: { code: 'SplxlOBeZQQYbYS6WxSbIA', state: 'af0ifjsldkj' },
    },
  },
  {
    operationId: 'integrationInstallLink',
    method: 'GET',
    path: '/integrations/install/{type}',
    tag: 'Integrations',
    summary: 'The installer link of an integrator token',
    description:
      'The `installUrl` of `POST /api/v1/integrations/integrator/token`: redirects (302) to the ' +
      "provider's authorization page for the token's organization. Once, within 15 minutes; a used, " +
      'expired or unknown token answers a page saying so.',
    params: typeParams,
    query: z.object({ token: z.string().max(200).describe('The integrator token') }),
    responses: [
      { status: 302, description: "To the provider's authorization page", headers: { Location: 'The page' } },
      htmlPage('The link is not valid'),
    ],
    errors: [],
    example: {
      params: { type: 'searchAds' },
      query: { token: 'vit_0123456789abcdef0123456789abcdef0123456789abcdef' },
    },
  },
]

function html(reply: FastifyReply, body: string): string {
  reply
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
  return body
}

const typeOf = (params: unknown): IntegrationType | undefined => {
  const parsed = typeParams.safeParse(params)
  return parsed.success ? parsed.data.type : undefined
}

export async function integrationPagesPlugin(app: FastifyInstance, deps: FlowDeps): Promise<void> {
  app.get('/integrations/callback/:type', { logLevel: 'warn' }, async (request, reply) => {
    const type = typeOf(request.params)
    if (!type) return html(reply, page('Not connected', '<p>This integration type does not exist.</p>'))
    try {
      const url = new URL(request.url, 'http://callback.invalid')
      const row = await completeInstall(deps, type, url)
      const name = escapeHtml(deps.settings[type]?.name ?? type)
      // A platform that lists no accounts: the organization enters its account id in the app.
      const accounts = row.ads_accounts
        ? `Ads accounts:</p><ul>${row.ads_accounts.map((a) => `<li>${escapeHtml(a.name)} (${escapeHtml(a.id)})</li>`).join('')}</ul>`
        : 'Enter the id of the ads account audiences go to in the app.</p>'
      return html(
        reply,
        page(
          'Connected',
          `<p>${name} is connected. ${accounts}<p>You can close this page and go back to the app.</p>`,
        ),
      )
    } catch (error) {
      const message = error instanceof Error ? error.message : 'The installation failed'
      // The words the person reads, no more: the adapters cut codes, tokens and secrets out of them.
      request.log.warn({ integrationType: type, reason: message }, 'integration not connected')
      return html(reply, page('Not connected', `<p>${escapeHtml(message)}</p>`))
    }
  })

  app.get('/integrations/install/:type', { logLevel: 'warn' }, async (request, reply) => {
    const type = typeOf(request.params)
    const token = (request.query as Record<string, unknown>).token
    const target =
      type && typeof token === 'string' && token.length <= 200
        ? await redeemIntegratorToken(deps, type, token).catch(() => undefined)
        : undefined
    if (!target) {
      return html(
        reply,
        page('This link is not valid', '<p>It may have been used or expired. Ask for a new one.</p>'),
      )
    }
    return reply.code(302).header('location', target.url).header('referrer-policy', 'no-referrer').send()
  })
}
