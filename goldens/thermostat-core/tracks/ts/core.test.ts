// Withheld: lands in test/ in the grader only.
import { test } from "node:test";
import assert from "node:assert/strict";
import { init, update, type Model, type Msg } from "../src/core.ts";

const run = (model: Model, msgs: Msg[]): Model => msgs.reduce(update, model);
const frozen = (model: Model): Model => Object.freeze({ ...model });

test("starts at 20, off, not running", () => {
  assert.deepEqual({ ...init() }, { target: 20, mode: "off", running: false });
});

test("set target is limited to 10..30", () => {
  assert.equal(update(init(), { kind: "setTarget", value: 25 }).target, 25);
  assert.equal(update(init(), { kind: "setTarget", value: 99 }).target, 30);
  assert.equal(update(init(), { kind: "setTarget", value: -4 }).target, 10);
});

test("up and down stop at the bounds", () => {
  assert.equal(update(init(), { kind: "up" }).target, 21);
  assert.equal(update(init(), { kind: "down" }).target, 19);
  assert.equal(run(init(), [{ kind: "setTarget", value: 30 }, { kind: "up" }]).target, 30);
  assert.equal(run(init(), [{ kind: "setTarget", value: 10 }, { kind: "down" }]).target, 10);
});

test("set mode stops the running", () => {
  const heating = run(init(), [{ kind: "setMode", mode: "heat" }, { kind: "reading", temp: 15 }]);
  assert.equal(heating.running, true);
  const cooling = update(heating, { kind: "setMode", mode: "cool" });
  assert.equal(cooling.mode, "cool");
  assert.equal(cooling.running, false);
});

test("heat runs below the band and stops above it", () => {
  const heat = update(init(), { kind: "setMode", mode: "heat" });
  assert.equal(update(heat, { kind: "reading", temp: 20 }).running, false);
  const on = update(heat, { kind: "reading", temp: 19 });
  assert.equal(on.running, true);
  assert.equal(update(on, { kind: "reading", temp: 20 }).running, true);
  assert.equal(update(on, { kind: "reading", temp: 21 }).running, false);
});

test("cool runs above the band and stops below it", () => {
  const cool = update(init(), { kind: "setMode", mode: "cool" });
  assert.equal(update(cool, { kind: "reading", temp: 20 }).running, false);
  const on = update(cool, { kind: "reading", temp: 21 });
  assert.equal(on.running, true);
  assert.equal(update(on, { kind: "reading", temp: 20 }).running, true);
  assert.equal(update(on, { kind: "reading", temp: 19 }).running, false);
});

test("off never runs", () => {
  assert.equal(run(init(), [{ kind: "reading", temp: 0 }, { kind: "reading", temp: 40 }]).running, false);
});

test("update leaves the given model unchanged", () => {
  const model = frozen(update(init(), { kind: "setMode", mode: "heat" }));
  const next = update(model, { kind: "up" });
  assert.equal(model.target, 20);
  assert.equal(next.target, 21);
});
