// The thermostat's update core.

export type Mode = "off" | "heat" | "cool";

export type Model = { readonly target: number; readonly mode: Mode; readonly running: boolean };

export type Msg =
  | { kind: "setTarget"; value: number }
  | { kind: "up" }
  | { kind: "down" }
  | { kind: "setMode"; mode: Mode }
  | { kind: "reading"; temp: number };

const LOWEST = 10;
const HIGHEST = 30;

export function init(): Model {
  return { target: 20, mode: "off", running: false };
}

const limited = (t: number): number => Math.max(LOWEST, Math.min(HIGHEST, t));

function nextRunning(model: Model, temp: number): boolean {
  const { mode, target, running } = model;
  if (mode === "heat") return temp <= target - 1 ? true : temp >= target + 1 ? false : running;
  if (mode === "cool") return temp >= target + 1 ? true : temp <= target - 1 ? false : running;
  return false;
}

export function update(model: Model, msg: Msg): Model {
  switch (msg.kind) {
    case "setTarget":
      return { ...model, target: limited(msg.value) };
    case "up":
      return { ...model, target: limited(model.target + 1) };
    case "down":
      return { ...model, target: limited(model.target - 1) };
    case "setMode":
      return { ...model, mode: msg.mode, running: false };
    case "reading":
      return { ...model, running: nextRunning(model, msg.temp) };
  }
}
