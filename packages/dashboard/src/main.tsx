// The dashboard's entry: sign-in, then the shell (navigation, organization) and the page of the URL.
import './styles.css'
import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { ApiError, api, loadSession, partnerApi, type Session, saveSession } from './api.js'
import { IntegrationNotices } from './components/integration-notices.js'
import { ErrorMessage } from './components/ui.js'
import { CompaniesPage } from './pages/companies.js'
import { IcpPage } from './pages/icp.js'
import { ListsPage } from './pages/lists.js'
import { OverviewPage } from './pages/overview.js'
import { SettingsPage } from './pages/settings.js'
import { VisitorsPage } from './pages/visitors.js'
import { currentPage, followLink } from './router.js'
import type { Organization } from './types.js'

const pages = [
  { path: '', title: 'Overview', Page: OverviewPage },
  { path: 'companies', title: 'Companies', Page: CompaniesPage },
  { path: 'visitors', title: 'Visitors', Page: VisitorsPage },
  { path: 'icp', title: 'ICP configs', Page: IcpPage },
  { path: 'lists', title: 'Lists', Page: ListsPage },
  { path: 'settings', title: 'Settings', Page: SettingsPage },
] as const

function SignIn({ onSignIn }: { onSignIn: (session: Session) => void }) {
  const [apiKey, setApiKey] = useState('')
  const [partnerKey, setPartnerKey] = useState('')
  const [error, setError] = useState<Error>()
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      const draft: Session = { apiKey: apiKey.trim(), organizationId: '' }
      const organizations = await api(draft).get('/organization/list')
      if (!organizations[0]) throw new Error('This key addresses no organization')
      const session: Session = { ...draft, organizationId: organizations[0].id }
      if (partnerKey.trim()) {
        session.partnerKey = partnerKey.trim()
        await partnerApi(session)
          .get('/partner/webhooks')
          .catch((cause: ApiError) => {
            throw new Error(
              cause.status === 401
                ? 'The partner key was refused: check it (partner keys start with bsk_partner_)'
                : `Partner key: ${cause.message}`,
            )
          })
      }
      onSignIn(session)
    } catch (cause) {
      setError(
        cause instanceof ApiError && cause.status === 401
          ? new Error('This API key was refused: check it (organization keys start with bsk_live_)')
          : (cause as Error),
      )
    } finally {
      setBusy(false)
    }
  }
  return (
    <main class="signin">
      <h1>Visitor ID</h1>
      <form onSubmit={submit} class="card">
        <h2>Sign in</h2>
        <p class="hint">
          Use an organization API key (<code>bsk_live_…</code>). On a fresh install the first one is in{' '}
          <code>data/bootstrap.json</code> (<code>apiKey</code>). The key stays in this tab only.
        </p>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autoComplete="off"
          required
          value={apiKey}
          onInput={(event) => setApiKey((event.target as HTMLInputElement).value)}
        />
        <label for="partner-key">Partner key (optional: webhooks, custom domain, partner rules)</label>
        <input
          id="partner-key"
          type="password"
          autoComplete="off"
          value={partnerKey}
          onInput={(event) => setPartnerKey((event.target as HTMLInputElement).value)}
        />
        <ErrorMessage error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
    </main>
  )
}

function OrganizationPicker({ session, onChange }: { session: Session; onChange: (id: string) => void }) {
  const [organizations, setOrganizations] = useState<Organization[]>([])
  useEffect(() => {
    api(session)
      .get('/organization/list')
      .then(setOrganizations, () => setOrganizations([]))
  }, [session.apiKey])
  if (organizations.length <= 1) {
    return <span class="org-name">{organizations[0]?.name ?? ''}</span>
  }
  return (
    <select
      class="org-picker"
      aria-label="Organization"
      value={session.organizationId}
      onChange={(event) => onChange((event.target as HTMLSelectElement).value)}
    >
      {organizations.map((organization) => (
        <option key={organization.id} value={organization.id}>
          {organization.name}
        </option>
      ))}
    </select>
  )
}

function App() {
  const [session, setSession] = useState(loadSession)
  const [path, setPath] = useState(currentPage)
  const [search, setSearch] = useState(location.search)
  useEffect(() => {
    const onPop = () => {
      setPath(currentPage())
      setSearch(location.search)
    }
    addEventListener('popstate', onPop)
    return () => removeEventListener('popstate', onPop)
  }, [])
  const page = pages.find((p) => p.path === path) ?? pages[0]
  useEffect(() => {
    document.title = `${page.title} · Visitor ID`
  }, [page])
  const update = (next: Session | undefined) => {
    saveSession(next)
    setSession(next)
  }
  if (!session) return <SignIn onSignIn={update} />
  const go = (event: MouseEvent, to: string) => {
    followLink(event, to)
    if (event.defaultPrevented) document.getElementById('main')?.focus()
  }
  const { Page } = page
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Visitor ID</span>
        <OrganizationPicker session={session} onChange={(id) => update({ ...session, organizationId: id })} />
        <nav aria-label="Main">
          <ul>
            {pages.map((p) => (
              <li key={p.path}>
                <a
                  href={`/app/${p.path}`}
                  aria-current={p === page ? 'page' : undefined}
                  onClick={(event) => go(event, p.path)}
                >
                  {p.title}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" class="secondary signout" onClick={() => update(undefined)}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <IntegrationNotices key={session.organizationId} session={session} />
        <h1>{page.title}</h1>
        <Page key={`${session.organizationId}${search}`} session={session} />
      </main>
    </>
  )
}

render(<App />, document.getElementById('root')!)
