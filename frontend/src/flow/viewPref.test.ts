import { describe, expect, it } from "vitest";
import { DIRECTION_KEY, loadDirection, loadView, saveDirection, saveView, VIEW_KEY } from "./viewPref";

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

describe("the remembered direction of the Flow view", () => {
  it("is the view's own choice until the user picks one", () => {
    const data = new Map<string, string>();
    const store = { getItem: (k: string) => data.get(k) ?? null, setItem: (k: string, v: string) => void data.set(k, v), removeItem: (k: string) => void data.delete(k) };
    expect(loadDirection(store)).toBe("auto");
    saveDirection(store, "TB");
    expect(data.get(DIRECTION_KEY)).toBe("TB");
    expect(loadDirection(store)).toBe("TB");
    saveDirection(store, "auto");
    expect(data.has(DIRECTION_KEY)).toBe(false);
    data.set(DIRECTION_KEY, "diagonal");
    expect(loadDirection(store)).toBe("auto");
    expect(loadDirection(null)).toBe("auto");
  });
});
