import { Result, err, ok } from "neverthrow";

export type User = { name: string; age: number };

export type ImportError =
  | { kind: "parse"; message: string }
  | { kind: "invalid"; field: "name" | "age" }
  | { kind: "save"; cause: unknown };

const toJson = Result.fromThrowable(JSON.parse, (error): ImportError => ({ kind: "parse", message: String(error) }));

export function parseUser(raw: string): Result<User, ImportError> {
  return toJson(raw).andThen((value: unknown) => {
    const record = (value ?? {}) as { name?: unknown; age?: unknown };
    if (typeof record.name !== "string" || !record.name) return err({ kind: "invalid", field: "name" } as const);
    if (typeof record.age !== "number" || !Number.isInteger(record.age) || record.age < 0) {
      return err({ kind: "invalid", field: "age" } as const);
    }
    return ok({ name: record.name, age: record.age });
  });
}
