// The manifest schema is shared with the host and viewers, which never load workflow code.

export type { GraphManifest, ManifestTarget } from "@piw/protocol";
export { graphManifestSchema, manifestTargetSchema } from "@piw/protocol";
