import { assert, it } from "vitest"
import { call, done, read, sourceFile } from "./support/fixtures.ts"
import { contentText, occurrences, requestText, systemText } from "./support/requests.ts"
import { useScenario } from "./support/scenario.ts"

const scenario = useScenario({ files: { "src/a.ts": sourceFile("alpha") } })

it("a sub-agent session reaches the model unmodified", async () => {
  const s = scenario()
  const session = await s.newSession()
  const task = "SUBAGENT_TASK_9c1d: read src/a.ts twice"
  // The `task` call blocks the main agent until the sub-agent is done, so the script is consumed in this order.
  s.model.script([
    call("task", { description: "Read a file twice", prompt: task, subagent_type: "general" }, "main_task"),
    read(s, "src/a.ts", "sub_1"),
    read(s, "src/a.ts", "sub_2"),
    { text: "The sub-agent is done." },
    done
  ])
  await s.prompt(session, "delegate reading a.ts")

  const requests = s.requests()
  // The sub-agent's requests are the ones whose user message is the task prompt.
  const isSubAgent = (request: (typeof requests)[number]) =>
    request.messages.some((message) => message.role === "user" && contentText(message.content).includes(task))
  const subAgent = requests.filter(isSubAgent)
  const main = requests.filter((request) => !isSubAgent(request))
  assert.strictEqual(subAgent.length, 3)
  assert.strictEqual(main.length, 2)

  for (const request of subAgent) {
    const text = requestText(request)
    assert.notInclude(text, "[pruned")
    assert.notMatch(text, /\[id \d+\]/)
    assert.notInclude(systemText(request), "## Context pruning")
  }
  // Both identical reads reach the sub-agent's model in full.
  assert.strictEqual(occurrences(requestText(subAgent.at(-1)!), 'alpha59 = "alpha line 59"'), 2)
  // The main session around it is pruned as usual.
  for (const request of main) assert.include(systemText(request), "## Context pruning")
})
