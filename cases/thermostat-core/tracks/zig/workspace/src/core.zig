//! The thermostat's update core. Keep the declarations; replace the bodies.

pub const Mode = enum { off, heat, cool };

pub const Model = struct {
    target: i32,
    mode: Mode,
    running: bool,
};

pub const Msg = union(enum) {
    set_target: i32,
    up,
    down,
    set_mode: Mode,
    reading: i32,
};

pub fn init() Model {
    // TODO: the starting model.
    return .{ .target = 0, .mode = .off, .running = false };
}

pub fn update(model: Model, msg: Msg) Model {
    // TODO: handle every message.
    _ = msg;
    return model;
}
