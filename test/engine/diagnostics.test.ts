import { assert, describe, it } from "vitest"
import { diagnosticsOf, withoutDiagnostics } from "../../src/engine/diagnostics.ts"

// As OpenCode 1.18.33 writes them after a file change's confirmation (read in its binary).
const errors = [
  "LSP errors detected in this file, please fix:",
  '<diagnostics file="/p/src/a.ts">',
  "ERROR [3:7] Cannot find name 'compute'.",
  "</diagnostics>",
  "",
  "LSP errors detected in other files:",
  '<diagnostics file="/p/src/b.ts">',
  "ERROR [1:1] Cannot find module './a'.",
  "</diagnostics>"
].join("\n")

describe("a file change's language server errors", () => {
  it("are everything from the first heading on", () => {
    assert.strictEqual(diagnosticsOf(`Wrote file successfully.\n\n${errors}`), errors)
    assert.isUndefined(diagnosticsOf("Wrote file successfully."))
  })

  it("give way to a placeholder after the confirmation, which stays as it was", () => {
    assert.strictEqual(
      withoutDiagnostics(`Success. Updated the following files:\nM src/a.ts\n\n${errors}`, "[pruned]"),
      "Success. Updated the following files:\nM src/a.ts\n\n[pruned]"
    )
    assert.strictEqual(withoutDiagnostics("Edit applied successfully.", "[pruned]"), "Edit applied successfully.")
  })
})
