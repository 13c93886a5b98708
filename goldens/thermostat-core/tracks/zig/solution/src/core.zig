//! The thermostat's update core.

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

const lowest = 10;
const highest = 30;

pub fn init() Model {
    return .{ .target = 20, .mode = .off, .running = false };
}

fn limited(t: i32) i32 {
    return @max(lowest, @min(highest, t));
}

fn next_running(model: Model, temp: i32) bool {
    return switch (model.mode) {
        .off => false,
        .heat => if (temp <= model.target - 1) true else if (temp >= model.target + 1) false else model.running,
        .cool => if (temp >= model.target + 1) true else if (temp <= model.target - 1) false else model.running,
    };
}

pub fn update(model: Model, msg: Msg) Model {
    var next = model;
    switch (msg) {
        .set_target => |t| next.target = limited(t),
        .up => next.target = limited(model.target + 1),
        .down => next.target = limited(model.target - 1),
        .set_mode => |m| {
            next.mode = m;
            next.running = false;
        },
        .reading => |temp| next.running = next_running(model, temp),
    }
    return next;
}
