/**
 * OpenCode 1.18 appends the language server's errors to a file change's output (`edit`, `write`, `apply_patch`):
 * after the confirmation, sections headed `LSP errors detected in this file, please fix:`, `LSP errors detected in
 * <path>, please fix:` or `LSP errors detected in other files:`, each a `<diagnostics file="…">` block of up to 20
 * errors. They describe the files as the change left them, so they grow old with the change's content.
 */
const marker = "\n\nLSP errors detected "

/** Where a file change's output starts reporting errors, or -1 when it reports none. */
export const diagnosticsAt = (output: string): number => output.indexOf(marker)

/** The errors a file change's output reports, from their first heading, or undefined when it reports none. */
export const diagnosticsOf = (output: string): string | undefined => {
  const at = diagnosticsAt(output)
  return at < 0 ? undefined : output.slice(at + 2)
}

/** The output with its errors replaced by `placeholder`; unchanged when it reports none. */
export const withoutDiagnostics = (output: string, placeholder: string): string => {
  const at = diagnosticsAt(output)
  return at < 0 ? output : `${output.slice(0, at)}\n\n${placeholder}`
}
