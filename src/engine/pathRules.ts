import { type PlatformPath, posix, win32 } from "node:path"

/**
 * OpenCode hands the plugin the paths of the machine it runs on (`C:\Users\me\app` on Windows, `/home/me/app`
 * elsewhere), and the model writes tool inputs in the same form. The rules are told from a path OpenCode reported,
 * not from the machine this code runs on, so a session exported on Windows is read by its own rules anywhere.
 */
const windowsPath = /^(?:[A-Za-z]:[\\/]|\\\\)/

export const pathRulesOf = (reported: string): PlatformPath => windowsPath.test(reported) ? win32 : posix

/**
 * What names one file: `path` resolved against `directory`, and on Windows, whose file systems do not tell case
 * apart, in lower case (`C:/App/a.ts`, `c:\app\A.ts` and `a.ts` in `C:\App` are one file there).
 */
export const fileKeyOf = (directory: string, path: string): string => {
  const rules = pathRulesOf(directory)
  const resolved = rules.resolve(directory, path)
  return rules === win32 ? resolved.toLowerCase() : resolved
}

/** A path written with forward slashes, as glob patterns are (picomatch reads a backslash as an escape). */
export const withSlashes = (path: string, rules: PlatformPath): string =>
  rules === win32 ? path.replaceAll("\\", "/") : path
