/** One line per significant event; never inputs, prompts or secrets. */
export type HostLog = (line: string) => void;

export const silentLog: HostLog = () => {};
