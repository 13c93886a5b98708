import { Color, Inputs, type Plugin, type State, type System } from "@dylanebert/shallot";

// Marks the cube the spacebar paints.
export const Paintable = {};

const paint = {
    name: "paint",
    group: "simulation",
    update(state: State) {
        if (!Inputs.isKeyPressed("Space")) return;
        for (const eid of state.query([Paintable, Color])) Color.rgba.set(eid, 0.1, 0.85, 0.15, 1);
    },
} satisfies System;

const Paint = {
    name: "Paint",
    components: { Paintable },
    systems: [paint],
    traits: { Paintable: { defaults: () => ({}) } },
} satisfies Plugin;

export default Paint;
