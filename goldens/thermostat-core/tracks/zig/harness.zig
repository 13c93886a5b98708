// Withheld: lands beside the agent's src/core.zig in the grader only.
const std = @import("std");
const core = @import("core.zig");

fn run(model: core.Model, msgs: []const core.Msg) core.Model {
    var m = model;
    for (msgs) |msg| m = core.update(m, msg);
    return m;
}

test "starts at 20, off, not running" {
    const m = core.init();
    try std.testing.expectEqual(@as(i32, 20), m.target);
    try std.testing.expectEqual(core.Mode.off, m.mode);
    try std.testing.expect(!m.running);
}

test "set target is limited to 10..30" {
    try std.testing.expectEqual(@as(i32, 25), core.update(core.init(), .{ .set_target = 25 }).target);
    try std.testing.expectEqual(@as(i32, 30), core.update(core.init(), .{ .set_target = 99 }).target);
    try std.testing.expectEqual(@as(i32, 10), core.update(core.init(), .{ .set_target = -4 }).target);
}

test "up and down stop at the bounds" {
    try std.testing.expectEqual(@as(i32, 21), core.update(core.init(), .up).target);
    try std.testing.expectEqual(@as(i32, 19), core.update(core.init(), .down).target);
    try std.testing.expectEqual(@as(i32, 30), run(core.init(), &.{ .{ .set_target = 30 }, .up }).target);
    try std.testing.expectEqual(@as(i32, 10), run(core.init(), &.{ .{ .set_target = 10 }, .down }).target);
}

test "set mode stops the running" {
    const heating = run(core.init(), &.{ .{ .set_mode = .heat }, .{ .reading = 15 } });
    try std.testing.expect(heating.running);
    const cooling = core.update(heating, .{ .set_mode = .cool });
    try std.testing.expectEqual(core.Mode.cool, cooling.mode);
    try std.testing.expect(!cooling.running);
}

test "heat runs below the band and stops above it" {
    const heat = core.update(core.init(), .{ .set_mode = .heat });
    try std.testing.expect(!core.update(heat, .{ .reading = 20 }).running);
    const on = core.update(heat, .{ .reading = 19 });
    try std.testing.expect(on.running);
    try std.testing.expect(core.update(on, .{ .reading = 20 }).running);
    try std.testing.expect(!core.update(on, .{ .reading = 21 }).running);
}

test "cool runs above the band and stops below it" {
    const cool = core.update(core.init(), .{ .set_mode = .cool });
    try std.testing.expect(!core.update(cool, .{ .reading = 20 }).running);
    const on = core.update(cool, .{ .reading = 21 });
    try std.testing.expect(on.running);
    try std.testing.expect(core.update(on, .{ .reading = 20 }).running);
    try std.testing.expect(!core.update(on, .{ .reading = 19 }).running);
}

test "off never runs" {
    try std.testing.expect(!run(core.init(), &.{ .{ .reading = 0 }, .{ .reading = 40 } }).running);
}
