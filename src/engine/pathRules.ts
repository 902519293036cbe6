import { type PlatformPath, posix, win32 } from "node:path"

/**
 * OpenCode hands the plugin the paths of the machine it runs on (`C:\Users\me\app` on Windows, `/home/me/app`
 * elsewhere), and the model writes tool inputs in the same form. The rules are told from a path OpenCode reported,
 * not from the machine this code runs on, so a session exported on Windows is read by its own rules anywhere.
 */
const windowsPath = /^(?:[A-Za-z]:[\\/]|\\\\)/

export const pathRulesOf = (reported: string): PlatformPath => windowsPath.test(reported) ? win32 : posix

/** A path written with forward slashes, as glob patterns are (picomatch reads a backslash as an escape). */
export const withSlashes = (path: string, rules: PlatformPath): string =>
  rules === win32 ? path.replaceAll("\\", "/") : path
