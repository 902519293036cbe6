/**
 * The two modules a TUI plugin takes from OpenCode itself: its terminal UI (OpenTUI with Solid) hands its own
 * instances to every TUI plugin that imports these names (a plugin with a copy of its own would render nothing and
 * track no changes). The bundle leaves them as imports (scripts/build.ts); these are the few signatures it uses.
 */
declare module "solid-js" {
  export function createSignal<T>(value: T): [get: () => T, set: (next: T | ((previous: T) => T)) => T]
  export function createMemo<T>(compute: () => T): () => T
}

declare module "@opentui/solid/jsx-runtime" {
  /** Creates an OpenTUI element (`"box"`, `"text"`, `"b"`, ...) or renders a component with its props. */
  export function jsx(type: string | ((props: never) => unknown), props: object): unknown
}
