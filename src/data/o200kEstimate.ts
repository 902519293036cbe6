/**
 * A fast estimate of the o200k token count of a text, without loading the encoding (which costs 65-95 MB of memory
 * and 0.3-0.5 s to import) and without allocating: one pass over the characters.
 *
 * It splits the text as o200k's pre-tokenizer does (words with their leading space or punctuation mark and the
 * case split of camelCase, digit groups of 1-3, punctuation runs, whitespace runs), exactly for ASCII and closely for
 * other scripts, and adds for each piece the mean number of tokens o200k gives pieces of that kind and length.
 * The means were measured on code, line-numbered file reads, JSON, Markdown, shell output and generated session
 * content; test/data/o200kEstimate.test.ts holds the accuracy to account: a whole text of those kinds within 6% of
 * the exact count, sums over many texts closer still. Other scripts are estimated more roughly, erring high.
 */

const lower = 1
const upper = 2
const digit = 3
const space = 4
const newline = 5
const punct = 6

// dprint-ignore: a table, one row a line
/** Expected tokens x100 of a word by [prefix][case][letters], prefix none/space/other, case lower/Capital/UPPER/MIxed. */
const wordTable: ReadonlyArray<ReadonlyArray<number>> = [
  [0, 100, 100, 104, 104, 104, 107, 110, 110, 159, 159, 159, 176, 241, 307, 307, 307, 307, 326, 347, 368, 389, 411, 432, 453],
  [0, 100, 104, 104, 104, 104, 104, 105, 111, 126, 126, 131, 131, 131, 131, 211, 265, 290, 315, 340, 365, 390, 415, 440, 465],
  [0, 100, 104, 121, 157, 222, 222, 313, 395, 436, 484, 536, 654, 737, 737, 750, 808, 860, 953, 1010, 1088, 1124, 1181, 1238, 1295],
  [0, 100, 104, 202, 234, 297, 346, 372, 451, 451, 501, 534, 628, 684, 737, 737, 876, 914, 921, 972, 1110, 1110, 1153, 1205, 1258],
  [0, 100, 100, 100, 100, 100, 101, 102, 104, 107, 113, 129, 129, 134, 134, 142, 191, 267, 292, 317, 342, 367, 392, 417, 442],
  [0, 100, 100, 102, 102, 103, 103, 110, 128, 134, 134, 169, 169, 169, 169, 200, 296, 321, 346, 371, 396, 421, 446, 471, 496],
  [0, 100, 100, 105, 105, 132, 132, 132, 252, 252, 252, 252, 331, 336, 336, 336, 336, 447, 472, 497, 522, 547, 572, 597, 622],
  [0, 100, 100, 165, 165, 192, 192, 211, 211, 211, 230, 231, 256, 281, 306, 331, 356, 381, 406, 431, 456, 481, 506, 531, 556],
  [0, 102, 104, 106, 113, 118, 125, 135, 135, 166, 194, 194, 221, 285, 285, 315, 339, 365, 391, 416, 444, 468, 494, 519, 545],
  [0, 100, 141, 141, 146, 146, 150, 150, 180, 200, 200, 227, 238, 255, 255, 272, 285, 297, 310, 323, 335, 348, 360, 373, 386],
  [0, 103, 153, 153, 153, 155, 160, 160, 186, 195, 195, 347, 376, 425, 474, 524, 573, 622, 671, 720, 770, 819, 868, 917, 967],
  [0, 100, 100, 223, 294, 294, 355, 355, 355, 355, 429, 496, 563, 630, 697, 765, 832, 899, 966, 1033, 1100, 1167, 1234, 1301, 1368]
]
/** Extra tokens x100 per letter past the table, by [prefix][case]: the slope of its last columns. */
const wordSlope: ReadonlyArray<number> = wordTable.map((row) => row[24]! - row[23]!)

/** Expected tokens x100 of a punctuation run by [space before][newline after][length]. */
// dprint-ignore: a table, one row a line
const punctTable: ReadonlyArray<ReadonlyArray<number>> = [
  [0, 100, 101, 125, 163, 199, 262, 279, 279, 380, 655, 655, 655],
  [0, 100, 102, 130, 174, 201, 291, 313, 356, 393, 441, 450, 485],
  [0, 100, 100, 107, 122, 179, 179, 179, 275, 275, 275, 450, 485],
  [0, 100, 101, 104, 186, 252, 289, 306, 376, 376, 380, 450, 485]
]
const punctSlope = 35

const ascii = new Uint8Array(128)
for (let c = 0; c < 128; c++) {
  ascii[c] = c >= 97 && c <= 122
    ? lower
    : c >= 65 && c <= 90
    ? upper
    : c >= 48 && c <= 57
    ? digit
    : c === 10 || c === 13
    ? newline
    : c === 32 || c === 9 || c === 11 || c === 12
    ? space
    : punct
}

/** Classes of the Basic Multilingual Plane, filled 256 code points at a time when first needed. */
const bmp = new Uint8Array(65536)
const filled = new Uint8Array(256)
const isUpper = /[\p{Lu}\p{Lt}]/u
const isLetter = /[\p{L}\p{M}]/u
const isNumber = /\p{N}/u
const isSpace = /\s/u

const fill = (block: number) => {
  for (let c = block << 8; c < (block + 1) << 8; c++) {
    const ch = String.fromCharCode(c)
    // Letters of both cases or none (Lm, Lo, M) join either side of a case split, as lowercase letters do here.
    bmp[c] = isUpper.test(ch)
      ? upper
      : isLetter.test(ch)
      ? lower
      : isNumber.test(ch)
      ? digit
      : isSpace.test(ch)
      ? space
      : punct
  }
  filled[block] = 1
}

const classOf = (c: number): number => {
  if (c < 128) return ascii[c]!
  if (c >= 0xd800 && c <= 0xdfff) return punct
  if (filled[c >> 8] === 0) fill(c >> 8)
  return bmp[c]!
}

/** Greek and Cyrillic: o200k has whole words of these alphabets, about 0.27 tokens a letter in Russian prose. */
const isAlphabet = (c: number) => c >= 0x0370 && c <= 0x052f

/** Han, kana, Hangul and CJK symbols: o200k spends most of a token on each. */
const isWide = (c: number) =>
  (c >= 0x3000 && c <= 0x9fff) || (c >= 0xac00 && c <= 0xd7af) || (c >= 0xf900 && c <= 0xfaff)

/** Where the scan stopped; module state instead of a returned pair, so the scan never allocates. */
let at = 0

/** A word starting at `from` (its first letter) with the given prefix (0 none, 1 space, 2 other); sets `at`. */
const word = (text: string, from: number, prefix: number): number => {
  const n = text.length
  let i = from
  let ups = 0
  let lows = 0
  let wide = 0
  let foreign = 0
  let alphabet = 0
  for (; i < n; i++) {
    const c = text.charCodeAt(i)
    if ((c < 128 ? ascii[c] : classOf(c)) !== upper) break
    ups++
    if (c >= 128) {
      if (isAlphabet(c)) alphabet++
      else foreign++
    }
  }
  for (; i < n; i++) {
    const c = text.charCodeAt(i)
    if ((c < 128 ? ascii[c] : classOf(c)) !== lower) break
    lows++
    if (c >= 128) {
      if (isWide(c)) wide++
      else if (isAlphabet(c)) alphabet++
      else foreign++
    }
  }
  // An English contraction ('s, 'd, 'm, 't, 'll, 've, 're) stays with its word.
  if (i + 1 < n && text.charCodeAt(i) === 39) {
    const a = text.charCodeAt(i + 1) | 32
    const b = i + 2 < n ? text.charCodeAt(i + 2) | 32 : 0
    if (a === 115 || a === 100 || a === 109 || a === 116) {
      i += 2
      lows += 2
    } else if ((a === 108 && b === 108) || (a === 118 && b === 101) || (a === 114 && b === 101)) {
      i += 3
      lows += 3
    }
  }
  at = i
  const letters = ups + lows
  if (wide + foreign + alphabet > 0) {
    const ascii = letters - wide - foreign - alphabet
    return Math.max(100, (prefix === 0 ? 0 : 30) + wide * 80 + foreign * 45 + alphabet * 24 + ascii * 22)
  }
  const kind = prefix * 4 + (lows === 0 ? 2 : ups === 0 ? 0 : ups === 1 ? 1 : 3)
  return letters <= 24 ? wordTable[kind]![letters]! : wordTable[kind]![24]! + (letters - 24) * wordSlope[kind]!
}

/** A punctuation run starting at `from`, after a space when `spaced`; sets `at`. */
const punctuation = (text: string, from: number, spaced: boolean): number => {
  const n = text.length
  let i = from
  let run = 0
  let symbols = 0
  for (; i < n; i++) {
    const c = text.charCodeAt(i)
    if ((c < 128 ? ascii[c] : classOf(c)) !== punct) break
    if (c < 128) run++
    else if (c >= 0xd800 && c <= 0xdbff) {
      symbols += 150
      i++
    } else symbols += 100
  }
  let newlines = 0
  for (; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c !== 10 && c !== 13) break
    newlines++
  }
  at = i
  if (run === 0) return Math.max(100, symbols)
  const row = punctTable[(spaced ? 2 : 0) + (newlines > 0 ? 1 : 0)]!
  return (run <= 12 ? row[run]! : row[12]! + (run - 12) * punctSlope) + symbols
}

const isLetterClass = (k: number) => k === lower || k === upper

/** The estimated o200k token count of `text`. */
export const estimateO200k = (text: string): number => {
  const n = text.length
  let tokens = 0
  let i = 0
  while (i < n) {
    const c = text.charCodeAt(i)
    const k = c < 128 ? ascii[c]! : classOf(c)
    if (k === lower || k === upper) {
      tokens += word(text, i, 0)
      i = at
      continue
    }
    if (k === digit) {
      let j = i + 1
      while (j < n) {
        const d = text.charCodeAt(j)
        if ((d < 128 ? ascii[d] : classOf(d)) !== digit) break
        j++
      }
      tokens += (((j - i + 2) / 3) | 0) * 100
      i = j
      continue
    }
    const after = i + 1 < n ? text.charCodeAt(i + 1) : 0
    const next = after === 0 ? 0 : after < 128 ? ascii[after]! : classOf(after)
    if (k !== newline && isLetterClass(next)) {
      tokens += word(text, i + 1, c === 32 ? 1 : 2)
      i = at
      continue
    }
    if (k === punct) {
      tokens += punctuation(text, i, false)
      i = at
      continue
    }
    if (c === 32 && next === punct) {
      tokens += punctuation(text, i + 1, true)
      i = at
      continue
    }
    // Whitespace: through its last newline; else all of it but the last character, which joins what follows.
    let j = i
    let lastNewline = -1
    while (j < n) {
      const cj = text.charCodeAt(j)
      const kj = cj < 128 ? ascii[cj] : classOf(cj)
      if (kj === newline) lastNewline = j
      else if (kj !== space) break
      j++
    }
    tokens += 100
    i = lastNewline >= 0 ? lastNewline + 1 : j === n || j - i === 1 ? j : j - 1
  }
  return ((tokens + 50) / 100) | 0
}
