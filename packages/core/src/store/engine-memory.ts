// The embedded engine's memory bounds. The engine runs inside this process, so whatever it holds
// is the process's RSS: its total is capped (max_server_memory_usage, a statement past it is refused
// with MEMORY_LIMIT_EXCEEDED rather than the host running out), and so is each cache it keeps,
// whose defaults are fractions of the host's RAM (5 GiB of marks) made for a dedicated server.

/** The default of STORE_MEMORY_LIMIT: a 2 GB host, next to a Node heap of 384 MiB. */
export const defaultStoreMemoryLimit = 768 * 1024 ** 2

export interface EngineMemory {
  /** What the engine may hold in all, caches and statements together. */
  memoryLimit: number
  /** What one statement may hold (every session's max_memory_usage). */
  queryMemoryLimit: number
}

/** The memory settings as the engine's command-line arguments (server settings: given at start). */
export function engineMemoryArgs(memory: EngineMemory): string[] {
  const share = (divisor: number) => Math.floor(memory.memoryLimit / divisor)
  return [
    `--max_server_memory_usage=${memory.memoryLimit}`,
    // The caches are parts of the total, each a small share so statements keep the most of it.
    `--mark_cache_size=${share(8)}`,
    `--primary_index_cache_size=${share(16)}`,
    `--index_mark_cache_size=${share(32)}`,
    `--query_condition_cache_size=${share(32)}`,
    // Background merges stop taking new work past this (their default is half of the host's RAM).
    `--merges_mutations_memory_usage_soft_limit=${share(2)}`,
  ]
}

/** The per-session settings: each statement's own limit (an aggregation spills to disk at half of it). */
export function sessionMemorySettings(memory: EngineMemory): Record<string, number> {
  return { max_memory_usage: memory.queryMemoryLimit }
}
