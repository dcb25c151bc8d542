// The filter vocabulary shared by lists, the contact count and organization-level ICP configs
// (docs/decisions.md, "Contacts, lists and audiences"). Each non-empty key is a condition: membership in
// the listed values, case-insensitive (`job_titles`: a substring of the title); keys combine with AND.
import { z } from 'zod'

const values = z.array(z.string().trim().min(1).max(200)).max(1000)

export const companyFilterSchema = z.strictObject({
  industries: values.optional(),
  /** Size ranges such as `51-200`, like `employee_size_ranges`. */
  company_sizes: values.optional(),
  employee_size_ranges: values.optional(),
  domains: values.optional(),
  countries: values.optional(),
  regions: values.optional(),
  cities: values.optional(),
  revenue_ranges: values.optional(),
})

export const contactFilterSchema = z.strictObject({
  /** Substrings of the job title; at most 50, since each becomes its own rule group. */
  job_titles: values.max(50).optional(),
  seniorities: values.optional(),
  departments: values.optional(),
  countries: values.optional(),
})

/** `{company?, contact?}`; unknown keys are rejected (400). */
export const filterSchema = z.strictObject({
  company: companyFilterSchema.optional(),
  contact: contactFilterSchema.optional(),
})

export type CompanyFilter = z.infer<typeof companyFilterSchema>
export type ContactFilter = z.infer<typeof contactFilterSchema>
export type Filter = z.infer<typeof filterSchema>
