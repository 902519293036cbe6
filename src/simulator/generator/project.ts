/**
 * A system prompt the size and kind OpenCode sends with a build agent (provider instructions, then environment
 * and project instructions): about 1,700 o200k tokens. Written for the benchmark; it only has to be realistic in
 * size and shape, since it is sent unchanged on every request of a day. The instructions are the offline analyser's
 * stand-in (src/simulator/prompt.ts); the environment and AGENTS.md are the generated project's.
 */
import { environmentBlock, instructions } from "../prompt.ts"
import { projectDir } from "./generate.ts"

const environment = (time: number) =>
  `${environmentBlock(projectDir, time)}
<project>
  ${projectDir}/
    AGENTS.md
    package.json
    src/
    test/
    scripts/
    tsconfig.json
</project>

Instructions from: ${projectDir}/AGENTS.md
# acme-api

Node 22, TypeScript strict, ESM only. HTTP layer in src/api (one file per resource), business logic in src/services,
persistence in src/db (Postgres through a thin query builder), background jobs in src/workers.

- Run \`npm test\` (vitest) before saying a change is done; \`npm run typecheck\` must pass.
- Keep services free of HTTP types; map errors to responses in src/api only.
- New environment variables go in src/config/env.ts with a default and a line in README.md.
- Migrations are plain SQL in db/migrations, numbered; never edit a migration that has shipped.
- Log with the shared logger (src/lib/logger.ts), never console.log.
- Prefer small pure functions; no classes for stateless code.`

/** One string, as OpenCode hands it to plugins, dated the day of a request sent at `time` (ms). */
export const systemPrompt = (time: number): ReadonlyArray<string> => [`${instructions}\n${environment(time)}`]
