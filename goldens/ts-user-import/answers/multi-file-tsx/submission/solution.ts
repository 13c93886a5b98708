import { ResultAsync } from "neverthrow";
import { parseUser, type ImportError, type User } from "./parse.ts";
import { describe } from "./view.tsx";

export type { ImportError, User };

export function importUser(
  raw: string,
  save: (user: User) => Promise<void>,
  log: (error: ImportError) => void,
): ResultAsync<User, ImportError> {
  return parseUser(raw)
    .asyncAndThen((user) =>
      ResultAsync.fromPromise(save(user), (cause): ImportError => ({ kind: "save", cause })).map(() => user),
    )
    .orTee((error) => log(error))
    .orTee((error) => void describe(error));
}
