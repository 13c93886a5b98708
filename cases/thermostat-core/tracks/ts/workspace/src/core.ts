// The thermostat's update core. Keep the declarations; replace the bodies.

export type Mode = "off" | "heat" | "cool";

export type Model = { readonly target: number; readonly mode: Mode; readonly running: boolean };

export type Msg =
  | { kind: "setTarget"; value: number }
  | { kind: "up" }
  | { kind: "down" }
  | { kind: "setMode"; mode: Mode }
  | { kind: "reading"; temp: number };

export function init(): Model {
  // TODO: the starting model.
  return { target: 0, mode: "off", running: false };
}

export function update(model: Model, msg: Msg): Model {
  // TODO: handle every message.
  return model;
}
