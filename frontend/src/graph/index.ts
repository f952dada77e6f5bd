export * from "./types";
export * from "./manifest";
export * from "./edits";
export * from "./history";
export * from "./queries";
export * from "./textEdits";
export * from "./placement";
