import type { PlatformError } from "effect"

/**
 * Why a file could not be read or written, in words for a toast or an answer: "permission denied", "a symbolic link
 * loop".
 */
export const whyUnreadable = (error: PlatformError.PlatformError): string => {
  const code = (error.reason as { readonly cause?: { readonly code?: unknown } }).cause?.code
  if (code === "ELOOP") return "a symbolic link that leads back to itself (a loop)"
  if (code === "ENOTDIR") return "a path through something that is not a directory"
  if (code === "EISDIR") return "a directory"
  switch (error.reason._tag) {
    case "PermissionDenied":
      return "permission denied"
    case "AlreadyExists":
      // Creating a folder where a file is (a file, a folder: neither can be written through).
      return "something that is not a folder is in its place"
    case "BadResource":
      return "something that is not a regular file"
    default:
      return error.message
  }
}
