import { readFileSync } from "node:fs"
import { createServer } from "node:http"
import { createHandler } from "./routes.js"
import { createStore } from "./store.js"

const port = Number(process.env.PORT ?? 3000)
const seedFile = process.env.SEED ?? new URL("../data/todos.json", import.meta.url)

const seed = JSON.parse(readFileSync(seedFile, "utf8"))
const store = createStore(seed)
const server = createServer(createHandler(store))

server.listen(port, () => {
  console.log(`todo-api listening on http://localhost:${port} with ${seed.length} todos`)
})

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => server.close(() => process.exit(0)))
}
