import type { Plugin, State } from "@dylanebert/shallot";
import { installHarness } from "@dylanebert/shallot/harness";

// Publishes window.__harness so a browser check knows when the first frame has drawn.
const Harness = {
    name: "Harness",
    warm(state: State) {
        installHarness(state);
    },
} satisfies Plugin;

export default Harness;
