import { PartPlugin, type Plugin, SearPlugin } from "@dylanebert/shallot";
import { engineLayout, fsCtxSchema, lit, registerSurface, surfaceLayout } from "@dylanebert/shallot/sear/core";
import { Xform } from "@dylanebert/shallot/utils/core";
import tgpu from "typegpu";
import * as d from "typegpu/data";
import * as std from "typegpu/std";

const layout = surfaceLayout({
    eids: { type: "storage", element: d.u32 },
    transforms: { type: "storage", element: Xform },
});

// Three light/dark bands per face along u, drifting with the engine clock (frame.time), so
// the pattern moves at the same speed whatever the frame rate.
const stripesFs = tgpu.fn(
    [fsCtxSchema()],
    d.vec4f,
)((ctx) => {
    "use gpu";
    const wave = std.sin(ctx.uv.x * 18.85 + engineLayout.$.frame.time * 2.5);
    const band = std.step(0, wave);
    const base = std.mix(d.vec3f(0.06, 0.08, 0.3), d.vec3f(0.95, 0.85, 0.3), band);
    return d.vec4f(lit(base, ctx.worldNormal), 1);
});

const Stripes = {
    name: "Stripes",
    // the render plugins clear the surface registry on (re)build, so register after them
    dependencies: [PartPlugin, SearPlugin],
    initialize(state) {
        registerSurface(state, { name: "stripes", layout, fragmentInputs: { uv: true }, fs: stripesFs });
    },
} satisfies Plugin;

export default Stripes;
