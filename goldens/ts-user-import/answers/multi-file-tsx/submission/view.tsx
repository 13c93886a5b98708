/** @jsx h */
import type { ImportError } from "./parse.ts";

type Node = { tag: string; text: string };

export function h(tag: string, _props: null, ...children: string[]): Node {
  return { tag, text: children.join("") };
}

export namespace h {
  export namespace JSX {
    export type Element = Node;
    export interface IntrinsicElements {
      p: {};
    }
  }
}

export function describe(error: ImportError): Node {
  return <p>{error.kind === "invalid" ? `invalid ${error.field}` : error.kind}</p>;
}
