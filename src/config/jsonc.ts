import * as Jsonc from "jsonc-parser"

/**
 * JSONC to a value, for config files: comments and trailing commas allowed, the same syntax errors (codes, offsets,
 * recovery) as `jsonc-parser`'s `parse`, with two differences that matter for files anyone can write:
 *
 * - Nesting depth is bounded by memory only. `jsonc-parser` descends recursively (three frames per level), so a file
 *   nested some thousands of levels deep exhausts the stack; this parser keeps its own stack of open containers.
 * - Every key becomes an own property, `__proto__` included. `jsonc-parser` assigns properties, so a `__proto__` key
 *   replaces the parsed object's prototype instead: the key vanishes from the result, and the values under it can
 *   be read through the object as if they were its own (JSON.parse does it this way too).
 *
 * Only the scanner of `jsonc-parser` is used; it works token by token, without recursion.
 */

export interface ParseResult {
  /** undefined for a file with no value (empty, or only comments). */
  readonly value: unknown
  readonly errors: ReadonlyArray<Jsonc.ParseError>
}

type Container =
  | { readonly kind: "object"; readonly value: Record<string, unknown>; needsComma: boolean; key: string }
  | { readonly kind: "array"; readonly value: Array<unknown>; needsComma: boolean }

const SyntaxKind = {
  OpenBrace: 1,
  CloseBrace: 2,
  OpenBracket: 3,
  CloseBracket: 4,
  Comma: 5,
  Colon: 6,
  Null: 7,
  True: 8,
  False: 9,
  String: 10,
  Number: 11,
  LineComment: 12,
  BlockComment: 13,
  LineBreak: 14,
  Trivia: 15,
  Unknown: 16,
  EOF: 17
} as const satisfies Record<string, Jsonc.SyntaxKind>

const ScanError = {
  UnexpectedEndOfComment: 1,
  UnexpectedEndOfString: 2,
  UnexpectedEndOfNumber: 3,
  InvalidUnicode: 4,
  InvalidEscapeCharacter: 5,
  InvalidCharacter: 6
} as const satisfies Record<string, Jsonc.ScanError>

const ParseErrorCode = {
  InvalidSymbol: 1,
  InvalidNumberFormat: 2,
  PropertyNameExpected: 3,
  ValueExpected: 4,
  ColonExpected: 5,
  CommaExpected: 6,
  CloseBraceExpected: 7,
  CloseBracketExpected: 8,
  EndOfFileExpected: 9,
  UnexpectedEndOfComment: 11,
  UnexpectedEndOfString: 12,
  UnexpectedEndOfNumber: 13,
  InvalidUnicode: 14,
  InvalidEscapeCharacter: 15,
  InvalidCharacter: 16
} as const satisfies Record<string, Jsonc.ParseErrorCode>

const scanErrors: Partial<Record<number, Jsonc.ParseErrorCode>> = {
  [ScanError.InvalidUnicode]: ParseErrorCode.InvalidUnicode,
  [ScanError.InvalidEscapeCharacter]: ParseErrorCode.InvalidEscapeCharacter,
  [ScanError.UnexpectedEndOfNumber]: ParseErrorCode.UnexpectedEndOfNumber,
  [ScanError.UnexpectedEndOfComment]: ParseErrorCode.UnexpectedEndOfComment,
  [ScanError.UnexpectedEndOfString]: ParseErrorCode.UnexpectedEndOfString,
  [ScanError.InvalidCharacter]: ParseErrorCode.InvalidCharacter
}

const setOwn = (target: Record<string, unknown>, key: string, value: unknown): void => {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}

export const parseJsonc = (text: string): ParseResult => {
  const scanner = Jsonc.createScanner(text, false)
  const errors: Array<Jsonc.ParseError> = []
  const stack: Array<Container> = []
  let root: unknown
  let token: Jsonc.SyntaxKind = SyntaxKind.EOF

  const report = (error: Jsonc.ParseErrorCode) => {
    errors.push({ error, offset: scanner.getTokenOffset(), length: scanner.getTokenLength() })
  }

  const scanNext = (): Jsonc.SyntaxKind => {
    for (;;) {
      token = scanner.scan()
      const scanError = scanErrors[scanner.getTokenError()]
      if (scanError !== undefined) report(scanError)
      if (token === SyntaxKind.Unknown) report(ParseErrorCode.InvalidSymbol)
      else if (
        token !== SyntaxKind.LineComment && token !== SyntaxKind.BlockComment &&
        token !== SyntaxKind.LineBreak && token !== SyntaxKind.Trivia
      ) return token
    }
  }

  /** Reports `error`, then skips to the next token of `until` (or to the end): jsonc-parser's recovery. */
  const fail = (error: Jsonc.ParseErrorCode, until: ReadonlyArray<Jsonc.SyntaxKind> = []) => {
    report(error)
    if (until.length === 0) return
    while (token !== SyntaxKind.EOF && !until.includes(token)) scanNext()
  }

  const put = (value: unknown) => {
    const parent = stack[stack.length - 1]
    if (parent === undefined) root = value
    else if (parent.kind === "array") parent.value.push(value)
    else setOwn(parent.value, parent.key, value)
  }

  /** A value at the current token: a scalar is consumed; a container is opened. False when there is none. */
  const beginValue = (): boolean => {
    switch (token) {
      case SyntaxKind.OpenBrace: {
        const value: Record<string, unknown> = {}
        put(value)
        stack.push({ kind: "object", value, needsComma: false, key: "" })
        scanNext()
        return true
      }
      case SyntaxKind.OpenBracket: {
        const value: Array<unknown> = []
        put(value)
        stack.push({ kind: "array", value, needsComma: false })
        scanNext()
        return true
      }
      case SyntaxKind.String:
        put(scanner.getTokenValue())
        break
      case SyntaxKind.Number: {
        let value = Number(scanner.getTokenValue())
        if (Number.isNaN(value)) {
          report(ParseErrorCode.InvalidNumberFormat)
          value = 0
        }
        put(value)
        break
      }
      case SyntaxKind.Null:
        put(null)
        break
      case SyntaxKind.True:
        put(true)
        break
      case SyntaxKind.False:
        put(false)
        break
      default:
        return false
    }
    scanNext()
    return true
  }

  /** Called at the container's closing token, or at the end of the text when it was never closed. */
  const close = (container: Container) => {
    stack.pop()
    if (token !== SyntaxKind.EOF) scanNext()
    else report(container.kind === "object" ? ParseErrorCode.CloseBraceExpected : ParseErrorCode.CloseBracketExpected)
  }

  scanNext()
  if (token === SyntaxKind.EOF) return { value: undefined, errors }
  if (!beginValue()) {
    report(ParseErrorCode.ValueExpected)
    return { value: root, errors }
  }
  while (stack.length > 0) {
    const container = stack[stack.length - 1]!
    const closing = container.kind === "object" ? SyntaxKind.CloseBrace : SyntaxKind.CloseBracket
    if (token === closing || token === SyntaxKind.EOF) {
      close(container)
      continue
    }
    if (token === SyntaxKind.Comma) {
      if (!container.needsComma) fail(ParseErrorCode.ValueExpected)
      scanNext()
      if (token === closing) {
        close(container)
        continue
      }
    } else if (container.needsComma) {
      fail(ParseErrorCode.CommaExpected)
    }
    container.needsComma = true
    if (container.kind === "array") {
      if (!beginValue()) fail(ParseErrorCode.ValueExpected, [SyntaxKind.CloseBracket, SyntaxKind.Comma])
      continue
    }
    if (token !== SyntaxKind.String) {
      fail(ParseErrorCode.PropertyNameExpected, [SyntaxKind.CloseBrace, SyntaxKind.Comma])
      fail(ParseErrorCode.ValueExpected, [SyntaxKind.CloseBrace, SyntaxKind.Comma])
      continue
    }
    container.key = scanner.getTokenValue()
    scanNext()
    if (token !== SyntaxKind.Colon) {
      fail(ParseErrorCode.ColonExpected, [SyntaxKind.CloseBrace, SyntaxKind.Comma])
      continue
    }
    scanNext()
    if (!beginValue()) fail(ParseErrorCode.ValueExpected, [SyntaxKind.CloseBrace, SyntaxKind.Comma])
  }
  if (token !== SyntaxKind.EOF) report(ParseErrorCode.EndOfFileExpected)
  return { value: root, errors }
}
