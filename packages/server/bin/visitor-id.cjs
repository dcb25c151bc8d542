#!/usr/bin/env node
// The `visitor-id` command. CommonJS on purpose: it sizes libuv's thread pool before anything uses
// it (loading an ES module already does, and the size is read once, at first use). Every query of
// the embedded engine holds a thread of that pool while it runs, so the default 4 threads would cap
// the process at 4 queries at once whatever its sessions: with the requests' CLICKHOUSE_SESSIONS
// and the background CLICKHOUSE_BACKGROUND_SESSIONS all busy, a request's query would wait for a
// thread a background pass holds. One thread per session, and 4 for files, DNS and crypto.
const sessions = Number(process.env.CLICKHOUSE_SESSIONS) || 4
const background = Number(process.env.CLICKHOUSE_BACKGROUND_SESSIONS) || 2
process.env.UV_THREADPOOL_SIZE ??= String(sessions + background + 4)
import('../dist/main.js')
