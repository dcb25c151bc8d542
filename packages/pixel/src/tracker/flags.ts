// Compile-time feature flags. build.mjs replaces them with esbuild `define`, so code behind a
// disabled flag is removed from the bundle and costs zero bytes. All are on in the default build.
declare global {
  /** Count pushState / replaceState / popstate navigations as page views. */
  const FEATURE_SPA: boolean
  /** Send engaged time and maximum scroll depth on pagehide / visibility change. */
  const FEATURE_ENGAGEMENT: boolean
  /** Opt-in (per pixel config) capture of the email field of submitted forms. */
  const FEATURE_FORMS: boolean
}

export {}
