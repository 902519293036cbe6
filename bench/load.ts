/**
 * Load time of the bundled plugin as OpenCode pays it: import `dist/plugin.js` and run its factory, in a fresh
 * Bun process. Prints `{ importMs, factoryMs }` as JSON.
 *
 * Usage (started by bench/run.ts): bun bench/load.ts <dist/plugin.js> <directory>
 * with HOME / XDG_CONFIG_HOME / XDG_DATA_HOME pointing at a scratch directory.
 */
import { pathToFileURL } from "node:url"

const [entry, directory] = process.argv.slice(2) as [string, string]
const ok = async () => ({ data: {} })
const client = {
  session: {
    get: async () => ({ data: { id: "ses_load" } }),
    messages: ok,
    prompt: ok,
    status: ok,
    abort: ok,
    delete: ok
  },
  tui: { showToast: ok },
  app: { log: ok }
}

const t0 = performance.now()
const module = await import(pathToFileURL(entry).href)
const t1 = performance.now()
const hooks = await module.default({
  client,
  directory,
  worktree: directory,
  project: {},
  serverUrl: new URL("http://localhost:4096"),
  $: undefined
})
const t2 = performance.now()
console.log(JSON.stringify({ importMs: t1 - t0, factoryMs: t2 - t1, hooks: Object.keys(hooks).length }))
await hooks.dispose?.()
process.exit(0)
