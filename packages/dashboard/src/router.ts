// Pages are paths under /app (History API): deep links work, and the server answers every one
// with the app.

/** The page part of the current URL: `companies` for /app/companies. */
export const currentPage = () => location.pathname.replace(/^\/app\/?/, '').replace(/\/$/, '')

/** Goes to a page of the app (with an optional query) without reloading: `navigate('visitors?domain=a.com')`. */
export function navigate(to: string): void {
  history.pushState(null, '', `/app/${to}`)
  dispatchEvent(new PopStateEvent('popstate'))
}

/** A link to a page of the app: a real link (new tab works), followed in place on a plain click. */
export function followLink(event: MouseEvent, to: string): void {
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return
  event.preventDefault()
  navigate(to)
}
