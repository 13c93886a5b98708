import { ResultAsync, err, fromThrowable, ok, type Result } from "neverthrow";

export type User = { name: string; age: number };

export type ImportError =
  | { kind: "parse"; message: string }
  | { kind: "invalid"; field: "name" | "age" }
  | { kind: "save"; cause: unknown };

const parseJson = fromThrowable(
  (raw: string): unknown => JSON.parse(raw),
  (error): ImportError => ({ kind: "parse", message: error instanceof Error ? error.message : String(error) }),
);

function validate(value: unknown): Result<User, ImportError> {
  const record = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
  if (typeof record.name !== "string" || record.name.length === 0) {
    return err({ kind: "invalid", field: "name" });
  }
  if (typeof record.age !== "number" || !Number.isInteger(record.age) || record.age < 0) {
    return err({ kind: "invalid", field: "age" });
  }
  return ok({ name: record.name, age: record.age });
}

export function importUser(
  raw: string,
  save: (user: User) => Promise<void>,
  log: (error: ImportError) => void,
): ResultAsync<User, ImportError> {
  return parseJson(raw)
    .andThen(validate)
    .asyncAndThen((user) =>
      ResultAsync.fromPromise(save(user), (cause): ImportError => ({ kind: "save", cause })).map(() => user),
    )
    .orTee(log);
}
