// The CLI's usage text and its usage errors (a one-line message, exit code 2).
import { AppError } from '@visitor-id/core/errors'

export const usage = `Usage: visitor-id <command> [options]   (from the repo: npm run cli -- <command>)

Commands:
  serve [--role all|ingest|api|worker]   start the service (default role: all)
  migrate                                apply pending migrations and exit
  org create --name NAME [--domain DOMAIN] [--owner-email EMAIL] [--plus-employee] [--agency]
                                         create an organization, its owner and pixel config
  keys create --org ORG_ID [--name NAME] [--scopes read,write] [--expires-at ISO8601]
                                         create an organization API key (printed once)
  partner-keys create --partner PARTNER_ID [--name NAME] [--scopes read,write] [--expires-at ISO8601]
                                         create a partner API key (printed once); scopes among
                                         read, write, admin
  partner-keys list --partner PARTNER_ID
                                         list the partner's keys: id, name, prefix, scopes,
                                         status (active, expired, revoked), expiry; no secrets
  partner-keys revoke --partner PARTNER_ID --key KEY_ID
                                         revoke a partner key (401 from then on)
  credits grant --org ORG_ID --amount N [--reason TEXT]
                                         add N identification credits (a positive integer) to
                                         the organization's ledger; prints the new balance
  credits balance --org ORG_ID           print the organization's identification credit balance
  billing pending                        list the checkouts and plan changes of plans with a price
                                         waiting for approval (BILLING_PROVIDER=local)
  billing approve CHECKOUT_SESSION_ID    approve one: the subscription starts (or changes plan)
                                         at once, with the plan's credits and product type
  import company-ips FILE [--replace] [--rejects OUT.csv]
                                         import company IP ranges (CSV or JSONL: cidr, company_id)
  import companies FILE [--rejects OUT.csv]
                                         import companies (CSV or JSONL: id, name, domain, ...)
  import contacts FILE [--rejects OUT.csv]
                                         import contacts (CSV or JSONL: email, personal_email,
                                         first_name, ..., company_id or company_domain)
  seed-demo [--org ORG_ID] [--visitors N]
                                         fill an organization (default: the bootstrap one) with
                                         demo companies, contacts, visitors over 30 days,
                                         identifications and a scored ICP config (N default 500)
  privacy erase --org ORG_ID (--email EMAIL | --email-sha256 HASH | --visitor-id ID)
                                         erase a person from every table of the organization
                                         (and their contacts of the dataset); prints the record
  privacy export --org ORG_ID (--email EMAIL | --email-sha256 HASH | --visitor-id ID) [--out FILE]
                                         everything held about a person, as JSON (FILE: mode 0600)
  backup --to DIR                        back up the store (the engine's BACKUP) and DATA_DIR's
                                         own files into a new directory, with a manifest; runs in
                                         the server when one owns DATA_DIR (hits keep arriving)
  restore --from DIR                     fill an empty DATA_DIR (and an empty database) from a
                                         backup; run it with no server on that DATA_DIR
  help                                   show this text

Settings come from environment variables (see README).`

/** A usage problem: printed as one line, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError'
}

/** Runs a core service; its refusals (unknown partner, bad scope, ...) are usage errors, not crashes. */
export async function asUsage<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof AppError && error.statusCode < 500) throw new UsageError(error.message)
    throw error
  }
}
