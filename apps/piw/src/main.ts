// The process entry arrives with its issue; until then the app only proves the boundary rules apply to it.
export {};
