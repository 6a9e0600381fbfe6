import { describe, expect, it } from "vitest";
import { nodeVersionProblem } from "../src/index.js";

describe("the Node version every piw entry checks first", () => {
  it("accepts 22.19 and anything newer", () => {
    for (const version of ["v22.19.0", "v22.19.1", "v22.20.7", "v23.0.0", "v24.1.0", "v30.0.0"]) {
      expect(nodeVersionProblem("piw", version), version).toBeUndefined();
    }
  });

  it("refuses anything older in one line that names the Node found and the Node needed", () => {
    for (const version of ["v22.18.9", "v22.0.0", "v21.99.0", "v20.11.1", "v18.20.4"]) {
      const problem = nodeVersionProblem("piw-host", version);
      expect(problem, version).toMatch(
        new RegExp(`^piw-host: needs Node 22\\.19 or newer; this is Node ${version.replaceAll(".", "\\.")} `),
      );
      expect(problem, version).not.toContain("\n");
    }
  });
});
