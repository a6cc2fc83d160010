// The wire's own check of raw JSON a person typed (the debugger's request editor): shapes are read
// off untyped values here, before anything is sent; everything past this file routes on typed unions.

const obj = (v: unknown): Record<string, unknown> => (v && typeof v === "object" && !Array.isArray(v) ? v as Record<string, unknown> : {});

const ROLES = new Set(["system", "user", "assistant", "tool"]);

/** Why the edited messages are not a request's messages, or null when they are. */
export function checkMessages(value: unknown): string | null {
  if (!Array.isArray(value) || value.length === 0) return "the request's messages must be a non-empty JSON array";
  for (const [i, m] of value.entries()) {
    const msg = obj(m);
    if (!Array.isArray(m) && m && typeof m === "object") {
      if (!ROLES.has(String(msg.role))) return `message ${i}: "role" must be one of system, user, assistant, tool`;
      if (!Array.isArray(msg.content)) return `message ${i}: "content" must be an array of blocks`;
      if (msg.role === "tool" && typeof (msg.toolCallId ?? msg.tool_call_id) !== "string") return `message ${i}: a tool message needs "toolCallId"`;
      for (const [j, b] of (msg.content as unknown[]).entries()) {
        const block = obj(b);
        if (typeof block.type !== "string") return `message ${i} block ${j}: needs a "type"`;
        if ((block.type === "text" || block.type === "reasoning") && typeof block.text !== "string") return `message ${i} block ${j}: "text" must be a string`;
      }
    } else return `message ${i} is not an object`;
  }
  return null;
}
