import { Status } from "../services/Status.ts"
import type { SessionState } from "../engine/session.ts"

/**
 * Hands the terminal UI the session's current status (src/services/Status.ts). Called wherever the plugin is done
 * changing a session: at the end of the request path, after a pruning tool, after a `/dcp` command.
 */
export const publishStatus = (state: SessionState) => Status.use((status) => status.publish(state))
