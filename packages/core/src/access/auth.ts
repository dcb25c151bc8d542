/** Who is calling: an organization key or a partner key (see key-authenticator.ts). */
export type Principal =
  | { kind: 'organization'; keyId: string; organizationId: string; userId: string | null; scopes: string[] }
  | { kind: 'partner'; keyId: string; partnerId: string; scopes: string[] }
