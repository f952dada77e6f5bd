import { describe, expect, it } from "vitest";
import { loadView, saveView, VIEW_KEY } from "./viewPref";

function memory(): Pick<Storage, "getItem" | "setItem"> & { data: Map<string, string> } {
  const data = new Map<string, string>();
  return { data, getItem: (k) => data.get(k) ?? null, setItem: (k, v) => void data.set(k, v) };
}

describe("the remembered canvas view", () => {
  it("is Flow by default and Nodes once chosen", () => {
    const store = memory();
    expect(loadView(store)).toBe("flow");
    saveView(store, "nodes");
    expect(store.data.get(VIEW_KEY)).toBe("nodes");
    expect(loadView(store)).toBe("nodes");
    store.data.set(VIEW_KEY, "something else");
    expect(loadView(store)).toBe("flow");
  });

  it("works without storage, or with a storage that throws", () => {
    expect(loadView(null)).toBe("flow");
    const broken = {
      getItem: () => {
        throw new Error("denied");
      },
      setItem: () => {
        throw new Error("denied");
      },
    };
    expect(loadView(broken)).toBe("flow");
    expect(() => saveView(broken, "nodes")).not.toThrow();
  });
});
