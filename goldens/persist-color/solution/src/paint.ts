import { Color, Inputs, type Plugin, type State, type System } from "@dylanebert/shallot";

// Marks the cube the number keys paint.
export const Paintable = {};

const KEY = "cube-color";
const COLORS: Record<string, [number, number, number]> = {
    Digit1: [0.9, 0.1, 0.1],
    Digit2: [0.1, 0.85, 0.15],
    Digit3: [0.1, 0.2, 0.95],
};

function apply(state: State, code: string): void {
    const [r, g, b] = COLORS[code];
    for (const eid of state.query([Paintable, Color])) Color.rgba.set(eid, r, g, b, 1);
}

const paint = {
    name: "paint",
    group: "simulation",
    update(state: State) {
        for (const code of Object.keys(COLORS)) {
            if (!Inputs.isKeyPressed(code)) continue;
            apply(state, code);
            localStorage.setItem(KEY, code);
        }
    },
} satisfies System;

const Paint = {
    name: "Paint",
    components: { Paintable },
    systems: [paint],
    traits: { Paintable: { defaults: () => ({}) } },
    // the saved choice is scene data: restore it after the scene parses, on every (re)build
    warm(state: State) {
        const saved = localStorage.getItem(KEY);
        if (saved && saved in COLORS) apply(state, saved);
    },
} satisfies Plugin;

export default Paint;
