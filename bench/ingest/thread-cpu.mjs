// CPU time of a process split by the kind of thread that spent it, read from /proc (Linux; NaN
// elsewhere). The server's threads, by name: its main thread (JavaScript: requests, batching,
// identification's code), Node's other threads (V8's garbage collection helpers and libuv's pool,
// from which the embedded engine's calls start), the engine's merges (`MergeMutate`) and the rest
// of the engine (query pipelines `ThreadPool`, schedules, inserts). Where a cost lands says which
// kind of work to make cheaper.
import { readdirSync, readFileSync } from 'node:fs'

/** Thread groups, in print order. */
export const threadGroups = ['main', 'node', 'engine', 'merges']

const groupOf = (pid, tid, name) => {
  if (tid === pid) return 'main'
  if (name === 'node') return 'node'
  if (name.startsWith('MergeMutate')) return 'merges'
  return 'engine'
}

/**
 * CPU milliseconds spent so far by each group of the process's live threads. (Threads that ended
 * are not counted: the engine keeps its pools, so few do.)
 */
export function threadCpuMs(pid) {
  const spent = Object.fromEntries(threadGroups.map((group) => [group, 0]))
  let tids
  try {
    tids = readdirSync(`/proc/${pid}/task`)
  } catch {
    return Object.fromEntries(threadGroups.map((group) => [group, Number.NaN]))
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      spent[groupOf(pid, Number(tid), name)] += (Number(fields[11]) + Number(fields[12])) * 10
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return spent
}

/** Per-group difference `after - before`, in microseconds per `count` (e.g. per request). */
export function perUnitUs(before, after, count) {
  return Object.fromEntries(
    threadGroups.map((group) => [group, ((after[group] - before[group]) * 1000) / Math.max(1, count)]),
  )
}
