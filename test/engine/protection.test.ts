import { describe, expect, it } from "vitest"
import { alwaysProtectedTools } from "../../src/engine/protection.ts"
import { call, protect, worktree } from "./support.ts"

const read = (filePath: string) => call({ tool: "read", input: { filePath } })

describe("protection of tools", () => {
  it("always protects the tools that carry plans, sub-agent work, pruning calls and file changes", () => {
    const protection = protect()
    for (
      const tool of [
        "task",
        "todowrite",
        "todoread",
        "discard",
        "extract",
        "batch",
        "write",
        "edit",
        "plan_enter",
        "plan_exit"
      ]
    ) {
      expect(protection.tool(tool), tool).toBe(true)
    }
    expect(alwaysProtectedTools.has("read")).toBe(false)
  })

  it("does not protect ordinary tools", () => {
    expect(protect().tool("read")).toBe(false)
    expect(protect().tool("bash")).toBe(false)
  })

  it("adds a rule's own protected tools to the always-protected ones", () => {
    const protection = protect()
    expect(protection.tool("grep", ["grep"])).toBe(true)
    expect(protection.tool("bash", ["grep"])).toBe(false)
    expect(protection.tool("task", ["grep"])).toBe(true)
  })
})

describe("protection of files", () => {
  it("matches a basename pattern anywhere in the tree", () => {
    const protection = protect({ patterns: ["*.env"] })
    expect(protection.file(read(`${worktree}/config/prod.env`))).toBe(true)
    expect(protection.file(read("prod.env"))).toBe(true)
    expect(protection.file(read(`${worktree}/config/prod.ts`))).toBe(false)
  })

  it("matches dotfiles", () => {
    expect(protect({ patterns: [".env"] }).file(read(`${worktree}/.env`))).toBe(true)
    expect(protect({ patterns: ["**/.secrets/**"] }).file(read(`${worktree}/a/.secrets/key`))).toBe(true)
  })

  it("matches a project-relative glob against an absolute path inside the project", () => {
    const protection = protect({ patterns: ["src/secret/**"] })
    expect(protection.file(read(`${worktree}/src/secret/keys.ts`))).toBe(true)
    expect(protection.file(read(`${worktree}/src/public/keys.ts`))).toBe(false)
  })

  it("matches a project-relative glob against a project-relative path", () => {
    expect(protect({ patterns: ["src/secret/**"] }).file(read("src/secret/keys.ts"))).toBe(true)
  })

  it("matches an absolute pattern against an absolute path", () => {
    expect(protect({ patterns: [`${worktree}/src/secret/**`] }).file(read(`${worktree}/src/secret/keys.ts`))).toBe(true)
    expect(protect({ patterns: ["/etc/**"] }).file(read("/etc/hosts"))).toBe(true)
  })

  it("matches an absolute pattern against a project-relative path of the same file", () => {
    expect(protect({ patterns: [`${worktree}/src/secret/**`] }).file(read("src/secret/keys.ts"))).toBe(true)
    expect(protect({ patterns: [`${worktree}/src/secret/**`] }).file(read("./src/secret/keys.ts"))).toBe(true)
  })

  it("does not match a project-relative glob against a file of the same name outside the project", () => {
    expect(protect({ patterns: ["src/secret/**"] }).file(read("/elsewhere/src/secret/keys.ts"))).toBe(false)
    expect(protect({ patterns: ["src/secret/**"] }).file(read("../other/src/secret/keys.ts"))).toBe(false)
  })

  it("protects nothing without patterns", () => {
    expect(protect().file(read(`${worktree}/.env`))).toBe(false)
  })

  it("ignores calls that have no file", () => {
    expect(protect({ patterns: ["**"] }).file(call({ tool: "bash", input: { command: "cat .env" } }))).toBe(false)
  })

  it("applies to the path of a list call", () => {
    expect(protect({ patterns: ["secret"] }).file(call({ tool: "list", input: { path: `${worktree}/secret` } }))).toBe(
      true
    )
  })
})

describe("turn protection", () => {
  const at = (turn: number) => call({ tool: "read", input: { filePath: "a" }, turn })

  it("protects calls younger than the configured number of turns", () => {
    const protection = protect({ turnProtection: { enabled: true, turns: 4 }, currentTurn: 10 })
    expect(protection.recent(at(10))).toBe(true)
    expect(protection.recent(at(7))).toBe(true)
    expect(protection.recent(at(6))).toBe(false)
    expect(protection.recent(at(1))).toBe(false)
  })

  it("protects nothing when switched off", () => {
    expect(protect({ turnProtection: { enabled: false, turns: 4 }, currentTurn: 10 }).recent(at(10))).toBe(false)
  })
})
