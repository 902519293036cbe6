/** Text is estimated at four characters a token: counting it exactly on every request would cost more than it tells. */
const charsPerToken = 4

/** Tokens of text of `chars` characters, as the request path estimates them. */
export const textTokens = (chars: number): number => Math.ceil(chars / charsPerToken)

/** A request's size from its parts: the system prompt, its text (by length), and the tool calls' tokens left in it. */
export const contextTokens = (systemTokens: number, textChars: number, callTokens: number): number =>
  Math.max(0, systemTokens + textTokens(textChars) + callTokens)
