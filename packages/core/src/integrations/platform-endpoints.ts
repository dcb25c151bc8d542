// The documented endpoints of the ads platforms that have an adapter here, in a module that imports
// nothing: the adapters use them, and so does the configuration (config.ts), for the defaults of a
// type's settings when SEARCH_ADS_PLATFORM / SOCIAL_ADS_PLATFORM names the platform.

/** Google's OAuth 2.0 endpoints and the Data Manager API's scope. */
export const googleOAuth = {
  authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
  tokenUrl: 'https://oauth2.googleapis.com/token',
  scope: 'https://www.googleapis.com/auth/datamanager',
} as const

export const googleDataManagerApiUrl = 'https://datamanager.googleapis.com/v1'

/**
 * The Graph API version every request names, unless configured: the one the official SDK pins in
 * its 26.0.0 release (`FacebookAdsApi.VERSION`). Meta keeps a version for at least two years after the next one is out; a
 * change of it is one setting (`version`) and a run of these tests.
 */
export const metaGraphVersion = 'v26.0'
export const metaGraphUrl = 'https://graph.facebook.com'
export const metaDialogUrl = 'https://www.facebook.com'
/** The one permission the integration asks for: it reads the ad accounts and manages their audiences. */
export const metaScopes: readonly string[] = ['ads_management']
