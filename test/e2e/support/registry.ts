import { createHash } from "node:crypto"
import { readFile } from "node:fs/promises"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * An npm registry on 127.0.0.1 that knows one package: the tarball `npm pack` made, at one version. It answers the
 * package's metadata (packument) and the tarball, 404 for anything else, and records every path asked for, so a
 * test sees what an install wanted besides the package.
 */
export interface Registry {
  /** With a trailing slash, as npm's `registry` setting takes it. */
  readonly url: string
  readonly requests: ReadonlyArray<string>
  readonly close: () => Promise<void>
}

export const startRegistry = async (input: {
  readonly tarball: string
  /** The package's package.json, as packed. */
  readonly manifest: { readonly name: string; readonly version: string } & Record<string, unknown>
}): Promise<Registry> => {
  const bytes = await readFile(input.tarball)
  const { name, version } = input.manifest
  const file = `${name.replace(/^@[^/]+\//, "")}-${version}.tgz`
  const requests: Array<string> = []
  let base = ""
  const packument = () => ({
    _id: name,
    name,
    "dist-tags": { latest: version },
    versions: {
      [version]: {
        ...input.manifest,
        _id: `${name}@${version}`,
        dist: {
          tarball: `${base}${name}/-/${file}`,
          shasum: createHash("sha1").update(bytes).digest("hex"),
          integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`
        }
      }
    },
    time: { [version]: new Date(0).toISOString() }
  })
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? "/").split("?")[0]!)
    requests.push(path)
    if (req.method === "GET" && path === `/${name}`) {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(packument()))
      return
    }
    if (req.method === "GET" && path === `/${name}/-/${file}`) {
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": bytes.length }).end(bytes)
      return
    }
    res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "not found" }))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  return {
    url: base,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}
