import { useLayoutEffect, useRef, type RefObject } from "react";

/**
 * A ref that always holds the value of the latest render: for listeners and callbacks that are
 * set up once but must act on current state.
 */
export function useLatest<T>(value: T): RefObject<T> {
  const ref = useRef(value);
  useLayoutEffect(() => {
    ref.current = value;
  });
  return ref;
}
