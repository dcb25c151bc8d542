/** The column type of every stored time: milliseconds, UTC. */
export const timeColumn = "DateTime64(3, 'UTC')"

/** The two stamps every entity row carries. */
export const stampColumns = { created_at: timeColumn, updated_at: timeColumn } as const
