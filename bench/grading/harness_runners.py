"""bench's own test runners for the `harness` check, as source text the host puts into the grader.

Python modules rather than .zig/.mjs files so the harness wheel (and its SHA-256 in every
record) covers them: a runner decides what a harness check observed.

Every runner reads a one-time key from a file and deletes it before any test (so before
any of the graded code) runs, then writes one record per harness test and an end record
after the last, each on its own line of stdout and each carrying an HMAC-SHA256 of its
body under that key:

    BENCH-TEST <index> <pass|fail|skip> <name as hex> <mac>
    BENCH-END <count> <mac>

The key is never printed, so seeing one record does not help write another.
"""

from __future__ import annotations

import json

TEST, END = "BENCH-TEST", "BENCH-END"

# `zig test --test-runner` replaces zig's own runner (lib/compiler/test_runner.zig in 0.16),
# which prints its summary from inside the process the graded code runs in. Only tests
# declared in the withheld files run: the agent's own tests neither count nor run.
ZIG_RUNNER = r'''//! bench's test runner for the `harness` check (zig format). Written by the host, per check.
const std = @import("std");
const builtin = @import("builtin");
const Io = std.Io;
const testing = std.testing;
const Hmac = std.crypto.auth.hmac.sha2.HmacSha256;

const key_path = @KEY_PATH@;
const harness_prefixes = [_][]const u8{ @PREFIXES@ };
const io: Io = Io.Threaded.global_single_threaded.io();

pub fn main(init: std.process.Init.Minimal) void {
    var key_buffer: [64]u8 = undefined;
    const key = Io.Dir.cwd().readFile(io, key_path, &key_buffer) catch |err| fatal("cannot read its key", err);
    Io.Dir.cwd().deleteFile(io, key_path) catch |err| fatal("cannot delete its key", err);
    var count: usize = 0;
    for (builtin.test_functions) |test_fn| {
        if (!isHarnessTest(test_fn.name)) continue;
        record(key, std.fmt.allocPrint(std.heap.page_allocator, "@TEST@ {d} {s} {s}", .{
            count, runOne(init, test_fn), hex(test_fn.name),
        }) catch |err| fatal("out of memory", err));
        count += 1;
    }
    record(key, std.fmt.allocPrint(std.heap.page_allocator, "@END@ {d}", .{count}) catch |err| fatal("out of memory", err));
}

fn isHarnessTest(name: []const u8) bool {
    for (harness_prefixes) |prefix| {
        if (std.mem.startsWith(u8, name, prefix)) return true;
    }
    return false;
}

fn runOne(init: std.process.Init.Minimal, test_fn: std.builtin.TestFn) []const u8 {
    testing.allocator_instance = .{};
    testing.io_instance = .init(testing.allocator, .{ .argv0 = .init(init.args), .environ = init.environ });
    testing.environ = init.environ;
    testing.log_level = .warn;
    var status: []const u8 = "pass";
    if (test_fn.func()) |_| {} else |err| {
        if (err == error.SkipZigTest) {
            status = "skip";
        } else {
            status = "fail";
            std.debug.print("FAIL {s}: {t}\n", .{ test_fn.name, err });
            if (@errorReturnTrace()) |trace| std.debug.dumpErrorReturnTrace(trace);
        }
    }
    testing.io_instance.deinit();
    if (testing.allocator_instance.deinit() == .leak and std.mem.eql(u8, status, "pass")) {
        status = "fail";
        std.debug.print("FAIL {s}: leaked memory\n", .{test_fn.name});
    }
    return status;
}

fn hex(name: []const u8) []const u8 {
    const digits = "0123456789abcdef";
    const out = std.heap.page_allocator.alloc(u8, name.len * 2) catch |err| fatal("out of memory", err);
    for (name, 0..) |byte, i| {
        out[2 * i] = digits[byte >> 4];
        out[2 * i + 1] = digits[byte & 15];
    }
    return out;
}

/// One write per record, starting with a newline: output the graded code left unfinished cannot swallow it.
fn record(key: []const u8, body: []const u8) void {
    var mac: [Hmac.mac_length]u8 = undefined;
    Hmac.create(&mac, body, key);
    const line = std.fmt.allocPrint(std.heap.page_allocator, "\n{s} {s}\n", .{ body, std.fmt.bytesToHex(mac, .lower) }) catch |err| fatal("out of memory", err);
    Io.File.stdout().writeStreamingAll(io, line) catch |err| fatal("cannot write a record", err);
}

fn fatal(what: []const u8, err: anyerror) noreturn {
    std.debug.print("bench test runner: {s}: {t}\n", .{ what, err });
    std.process.exit(3);
}
'''

# Node's own test runner (node:test `run`, every file in this one process), driven by a
# script of bench's: it takes the key, freezes node:assert and node:test and switches the
# inspector off before any test file loads, and takes the iterator over the run's events
# (and everything else it relies on) before then too, so code that later patches globals
# or modules can neither reach the key nor change what is written.
NODE_RUNNER = r'''// bench's test runner for the `harness` check (node format). Written by the host, per check.
import { readFileSync, unlinkSync } from "node:fs";
import * as crypto from "node:crypto";
import * as buffer from "node:buffer";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { run } from "node:test";

const KEY_PATH = @KEY_PATH@;
const HARNESS = @FILES@;
const key = readFileSync(KEY_PATH);
unlinkSync(KEY_PATH);

const require = createRequire(import.meta.url);
function refused() {
  throw new Error("bench: node:inspector is switched off while harness tests run");
}
for (const inspector of [require("node:inspector"), require("node:inspector/promises")]) {
  for (const field of ["Session", "open", "close", "url", "waitForDebugger"]) inspector[field] = refused;
  Object.freeze(inspector);
}
syncBuiltinESMExports();
const assert = require("node:assert"), test = require("node:test");
for (const value of [assert, assert.strict, test, ...Object.values(test)]) {
  if (typeof value === "function") Object.freeze(value);
}

// Copies, not live bindings or lookups at use: all of it is taken before a test file loads.
const createHmac = crypto.createHmac, Buffer = buffer.Buffer, call = Function.prototype.call;
const hmacProto = Object.getPrototypeOf(createHmac("sha256", "probe"));
const update = call.bind(hmacProto.update), digest = call.bind(hmacProto.digest);
const toString = call.bind(Buffer.prototype.toString), bufferFrom = Buffer.from.bind(Buffer);
const hasOwn = Object.hasOwn, includes = call.bind(Array.prototype.includes), join = call.bind(Array.prototype.join);
const write = process.stdout.write.bind(process.stdout), writeErr = process.stderr.write.bind(process.stderr);
const events = run({ files: process.argv.slice(2), isolation: "none" })[Symbol.asyncIterator]();
const next = call.bind(events.next);

function own(object, field) {
  return object !== null && typeof object === "object" && hasOwn(object, field) ? object[field] : undefined;
}

function record(body) {
  const mac = createHmac("sha256", key);
  update(mac, body);
  write(`\n${body} ${digest(mac, "hex")}\n`);
}

const path = [];
let count = 0;
for (;;) {
  const step = await next(events);
  if (own(step, "done")) break;
  const event = own(step, "value"), type = own(event, "type"), data = own(event, "data");
  const nesting = own(data, "nesting") ?? 0;
  if (type === "test:start") {
    path.length = nesting;
    path[nesting] = `${own(data, "name")}`;
    continue;
  }
  if ((type !== "test:pass" && type !== "test:fail") || !includes(HARNESS, own(data, "file"))) continue;
  if (own(own(data, "details"), "type") === "suite") continue;
  path.length = nesting;
  const name = join([...path, `${own(data, "name")}`], " > ");
  const skipped = own(data, "skip") !== undefined || own(data, "todo") !== undefined;
  const status = skipped ? "skip" : type === "test:pass" ? "pass" : "fail";
  if (status === "fail") {
    const error = own(own(data, "details"), "error");
    writeErr(`FAIL ${name}: ${`${error?.cause?.message ?? error?.message ?? error}`.split("\n")[0]}\n`);
  }
  record(`@TEST@ ${count} ${status} ${toString(bufferFrom(name, "utf8"), "hex")}`);
  count += 1;
}
record(`@END@ ${count}`);
'''


def zig_prefixes(test_files: list[str]) -> list[str]:
    """The names zig gives the tests of these files (paths relative to the test root's folder, .zig only):
    `a/b.zig` declares `a.b.test.<name>`, `a.b.decltest.<name>` and the unnamed `a.b.test_<n>`."""
    prefixes = []
    for path in test_files:
        module = path[: -len(".zig")].replace("/", ".")
        prefixes += [f"{module}.test.", f"{module}.decltest.", f"{module}.test_"]
    return prefixes


def render(template: str, key_path: str, **values: object) -> str:
    """The runner source with its key path and lists filled in (JSON strings are valid Zig and JS literals here:
    every name was checked to be plain before it got this far)."""
    text = template.replace("@KEY_PATH@", json.dumps(key_path)).replace("@TEST@", TEST).replace("@END@", END)
    if "prefixes" in values:
        text = text.replace("@PREFIXES@", ", ".join(json.dumps(p) for p in values["prefixes"]))
    if "files" in values:
        text = text.replace("@FILES@", json.dumps(values["files"]))
    return text
