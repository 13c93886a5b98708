import { ResultAsync, errAsync, fromThrowable, okAsync, safeTry } from "neverthrow";

export type User = { name: string; age: number };

export type ImportError =
  | { kind: "parse"; message: string }
  | { kind: "invalid"; field: "name" | "age" }
  | { kind: "save"; cause: unknown };

const parse = fromThrowable(
  (raw: string): unknown => JSON.parse(raw),
  (error): ImportError => ({ kind: "parse", message: String(error) }),
);

function check(value: unknown): ResultAsync<User, ImportError> {
  const record = (value ?? {}) as { name?: unknown; age?: unknown };
  if (typeof record.name !== "string" || record.name === "") return errAsync({ kind: "invalid", field: "name" });
  if (typeof record.age !== "number" || !Number.isInteger(record.age) || record.age < 0) {
    return errAsync({ kind: "invalid", field: "age" });
  }
  return okAsync({ name: record.name, age: record.age });
}

export function importUser(
  raw: string,
  save: (user: User) => Promise<void>,
  log: (error: ImportError) => void,
): ResultAsync<User, ImportError> {
  return safeTry(async function* () {
    const value = yield* parse(raw);
    const user = yield* check(value);
    yield* ResultAsync.fromPromise(save(user), (cause): ImportError => ({ kind: "save", cause }));
    return okAsync(user);
  }).orTee(log);
}
