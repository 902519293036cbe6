import { tool } from "@opencode-ai/plugin"

/**
 * The JSON Schema OpenCode 1.18 sends for a plugin tool's arguments, as its request bodies show it: zod's, headed by
 * the dialect's URL (`$schema`), without `additionalProperties`.
 */
export const hostArgumentsSchema = (args: Parameters<typeof tool.schema.object>[0]): Record<string, unknown> => {
  const { additionalProperties: _, ...schema } = tool.schema.toJSONSchema(tool.schema.object(args))
  return schema
}
