// Write importUser here: see PROMPT.md.
export {};
