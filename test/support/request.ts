import { findSessionId } from "../../src/host/messages.ts"
import { SessionId } from "../../src/host/sessionId.ts"
import { transform } from "../../src/hooks/transform.ts"

/** The transform of one request, for the session its messages name, as the messages hook runs it. */
export const transformOf = (messages: Array<unknown>) =>
  transform(SessionId.make(findSessionId(messages) ?? "ses_unnamed"), messages)
