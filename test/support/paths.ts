import { join } from "node:path"
import { Paths } from "../../src/services/Paths.ts"

/**
 * The production `Paths` layer over an environment that puts everything under `root` (home, config, data; the
 * project in `root/project`), so nothing touches the real home directory.
 */
export const pathsUnder = (root: string, options: { readonly envConfigDir?: string } = {}) =>
  Paths.layer({ directory: join(root, "project") }, {
    HOME: join(root, "home"),
    XDG_CONFIG_HOME: join(root, "config"),
    XDG_DATA_HOME: join(root, "data"),
    OPENCODE_CONFIG_DIR: options.envConfigDir
  })
