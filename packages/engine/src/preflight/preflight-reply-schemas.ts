/** The preflight reply's zod schemas, loaded on demand by evaluate-preflight.ts (only for a child's reply). */
export { preflightReplySchema, reusablePreflightSources } from "@piw/protocol";
