import { Result, ResultAsync } from "neverthrow";

export type User = { name: string; age: number };

export type ImportError =
  | { kind: "parse"; message: string }
  | { kind: "invalid"; field: "name" | "age" }
  | { kind: "save"; cause: unknown };

export function importUser(
  raw: string,
  save: (user: User) => Promise<void>,
  log: (error: ImportError) => void,
): ResultAsync<User, ImportError> {
  return Result.tryCatch(() => JSON.parse(raw) as User)
    .mapOk((user: User) => user)
    .toAsync(save)
    .tapError(log);
}
