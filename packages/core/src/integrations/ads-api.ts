// The ads API an integration talks to once connected (docs/decisions.md, "Integrations"): one small,
// provider-neutral contract, documented in packages/api/README.md ("Integrations"), that a
// platform's API (or a thin adapter in front of it) speaks:
//   GET  {api}/accounts                          -> { accounts: [{ id, name }] }
//   POST {api}/accounts/{accountId}/audiences    { name }                               -> { id }
//   POST {api}/audiences/{audienceId}/members    { schema: "EMAIL_SHA256", data: [...] } -> 2xx
// Every call carries `Authorization: Bearer <access token>`, times out after 30 s, and reads at most
// 1 MB of an answer.

export interface AdsAccount {
  id: string
  name: string
}

/** The ads API answered something else than a success: its status, and whether the token was refused. */
export class AdsApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
    this.name = 'AdsApiError'
  }
  get unauthorized(): boolean {
    return this.status === 401
  }
}

const timeoutMs = 30_000
const maxAnswerBytes = 1024 * 1024

async function call<T>(token: string, method: 'GET' | 'POST', url: string, body?: object): Promise<T> {
  let response: Response
  try {
    response = await fetch(url, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json',
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
      redirect: 'error',
      signal: AbortSignal.timeout(timeoutMs),
    })
  } catch (error) {
    throw new AdsApiError(0, `the ads API did not answer (${(error as Error).name})`)
  }
  const text = (await response.text()).slice(0, maxAnswerBytes)
  if (!response.ok) throw new AdsApiError(response.status, `the ads API answered ${response.status}`)
  try {
    return (text ? JSON.parse(text) : {}) as T
  } catch {
    throw new AdsApiError(response.status, 'the ads API answered something else than JSON')
  }
}

/** The ads accounts the token may use. */
export async function listAdsAccounts(apiUrl: string, token: string): Promise<AdsAccount[]> {
  const answer = await call<{ accounts?: unknown }>(token, 'GET', `${apiUrl}/accounts`)
  if (!Array.isArray(answer.accounts)) throw new AdsApiError(200, 'the ads API listed no `accounts` array')
  return answer.accounts
    .filter((a): a is { id: unknown; name?: unknown } => typeof a === 'object' && a !== null && 'id' in a)
    .map((a) => ({ id: String(a.id), name: typeof a.name === 'string' ? a.name : String(a.id) }))
}

/** A new customer-list audience on the account; its id. */
export async function createAudience(
  apiUrl: string,
  token: string,
  accountId: string,
  name: string,
): Promise<string> {
  const answer = await call<{ id?: unknown }>(
    token,
    'POST',
    `${apiUrl}/accounts/${encodeURIComponent(accountId)}/audiences`,
    {
      name,
    },
  )
  if (answer.id === undefined || answer.id === null)
    throw new AdsApiError(200, 'the ads API gave the audience no id')
  return String(answer.id)
}

/** Adds hashed emails (SHA-256 hex of the normalized email) to the audience. */
export async function uploadAudienceMembers(
  apiUrl: string,
  token: string,
  audienceId: string,
  hashes: readonly string[],
): Promise<void> {
  await call(token, 'POST', `${apiUrl}/audiences/${encodeURIComponent(audienceId)}/members`, {
    schema: 'EMAIL_SHA256',
    data: hashes,
  })
}
